export { PostgresRunStore } from './postgres-run-store';
export type { PostgresRunStoreOptions } from './postgres-run-store-options';
export { PostgresRunStoreProvider } from './postgres-run-store.provider';

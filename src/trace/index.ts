export { TraceStore } from './trace-store';
export { TraceReceiver } from './receiver/trace-receiver';
export { TraceStoreError, type TraceStoreErrorCode } from './trace-store.errors';
export type { TraceContentPolicy, TraceStoreDeps, TraceStoreLimits, TraceStoreOptions } from './trace-store-options';
export type {
  TraceAppendResult,
  TraceGapDetails,
  TracePage,
  TracePrincipalStatus,
  TracePruneResult,
  TraceQueryOptions,
  TraceSelector,
  TraceStoreCounters,
  TraceStoreStatus,
} from './trace-store.types';
export type { TraceDelivery, TraceIdentity, TraceIdentityKey, TraceRecord, TraceRecordKind } from './trace.types';
export type { TraceSource, TraceStoreBinding } from './trace-producer';
export { TraceStoreModule, type TraceStoreModuleAsyncOptions, type TraceStoreOptionsFactory } from './trace-store.module';
export type { TraceStoreModuleOptions } from './trace-store-module-options';
export { TraceStoreHealthIndicator } from './trace-store.health';

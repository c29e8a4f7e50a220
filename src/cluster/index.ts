export { ClusterInstance, type ClusterInstanceOptions } from './cluster-instance';
export { ClusterError, type ClusterErrorCode } from './cluster.errors';
export { ClusterModule, type ClusterModuleOptions, type ClusterModuleAsyncOptions, type ClusterOptionsFactory } from './cluster.module';
export { ClusterHealthIndicator } from './cluster.health';
export { ClusterAdmissionController, type ClusterAdmissionControllerDeps } from './admission/cluster-admission-controller';
export type { ClusterAdmissionOptions } from './admission/cluster-admission-options';
export type { ClusterAdmissionStatus } from './admission/cluster-admission.types';
export { PostgresRunStore } from './runs/postgres-run-store';
export type { PostgresRunStoreOptions } from './runs/postgres-run-store-options';

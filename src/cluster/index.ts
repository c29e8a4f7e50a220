export { ClusterInstance, type ClusterInstanceOptions } from './cluster-instance';
export { ClusterError, type ClusterErrorCode } from './cluster.errors';
export { ClusterModule, type ClusterModuleOptions, type ClusterModuleAsyncOptions, type ClusterOptionsFactory } from './cluster.module';
export { ClusterHealthIndicator } from './cluster.health';
export { ClusterAdmissionController, type ClusterAdmissionControllerDeps } from '../admission/cluster/cluster-admission-controller';
export type { ClusterAdmissionOptions } from '../admission/cluster/cluster-admission-options';
export type { ClusterAdmissionStatus } from '../admission/cluster/cluster-admission.types';
export { PostgresRunStore } from '../runner/runs/stores/postgres/postgres-run-store';
export type { PostgresRunStoreOptions } from '../runner/runs/stores/postgres/postgres-run-store-options';

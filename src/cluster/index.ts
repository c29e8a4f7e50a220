export { ClusterInstance, type ClusterInstanceOptions } from './cluster-instance';
export { ClusterError, type ClusterErrorCode } from './cluster.errors';
export { ClusterModule, type ClusterModuleOptions, type ClusterModuleAsyncOptions, type ClusterOptionsFactory } from './cluster.module';
export { ClusterHealthIndicator } from './cluster.health';

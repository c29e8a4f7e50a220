export { MetricsError, type MetricsErrorCode } from './metrics.errors';
export { MetricsModule } from './metrics.module';
export type { MetricsModuleOptions } from './metrics-module-options';
export { RuntimeMetrics, type RuntimeMetricsOptions } from './runtime-metrics';

export { openTelemetryTracing } from './open-telemetry-tracing';
export type { OpenTelemetryTracingOptions, RunnerTracerProvider } from './open-telemetry-tracing.types';

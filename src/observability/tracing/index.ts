export { openTelemetryTracing } from '../../runner/tracing/otel/open-telemetry-tracing';
export type { OpenTelemetryTracingOptions, RunnerTracerProvider } from '../../runner/tracing/otel/open-telemetry-tracing.types';

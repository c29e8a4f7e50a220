import type { RunTracer } from '../run-tracer';
import { loadOtelApi } from './otel-api-loader';
import { resolveOtelRunTracer } from './otel-tracer-options';
import type { OpenTelemetryTracingOptions } from './open-telemetry-tracing.types';

/**
 * The Runner's `tracing` option with OpenTelemetry: content-free `invoke_agent`, `chat` and
 * `execute_tool` spans of every invocation (GenAI semantic conventions). Without `@opentelemetry/api`
 * installed it is the no-op tracer, and `logger` is told once. Bad options, or a provider whose
 * `getTracer` throws or returns no tracer, give `invalid_runner_options {field: 'tracing'}`.
 *
 * @example
 * new Runner({ appName, agent, sessionService, tracing: openTelemetryTracing({ tracerProvider }) });
 */
export function openTelemetryTracing(options: OpenTelemetryTracingOptions = {}): RunTracer {
  return resolveOtelRunTracer(options, loadOtelApi);
}

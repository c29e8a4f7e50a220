import type { Tracer } from '@opentelemetry/api';
import { RunnerError } from '../../runner/runner.errors';
import { NO_RUN_TRACER, type RunTracer } from '../../runner/tracing/run-tracer';
import { readOptions } from '../../shared/options/option-reader';
import { TRACER_NAME } from './gen-ai-attributes';
import { loadOtelApi, type OtelApiLoader } from './otel-api-loader';
import { OtelRunTracer } from './otel-run-spans';
import type { OpenTelemetryTracingOptions, RunnerTracerProvider } from './open-telemetry-tracing.types';

const isObject = (value: unknown) => typeof value === 'object' && value !== null;
const RULES = {
  tracerProvider: (value: unknown) => isObject(value) && typeof (value as RunnerTracerProvider).getTracer === 'function',
  logger: (value: unknown) => isObject(value) && typeof (value as { warn?: unknown }).warn === 'function',
};

/**
 * The Runner's `tracing` option with OpenTelemetry: content-free `invoke_agent`, `chat` and
 * `execute_tool` spans of every invocation (GenAI semantic conventions). Without `@opentelemetry/api`
 * installed it is the no-op tracer, and `logger` is told once. Bad options, or a provider whose
 * `getTracer` throws or returns no tracer, give `invalid_runner_options {field: 'tracing'}`.
 *
 * @example
 * new Runner({ appName, agent, sessionService, tracing: openTelemetryTracing({ tracerProvider }) });
 */
export function openTelemetryTracing(options: OpenTelemetryTracingOptions = {}, load: OtelApiLoader = loadOtelApi): RunTracer {
  const read = readOptions(options, RULES, { name: 'tracing', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', { field: 'tracing' });
  const { tracerProvider, logger } = read.values as OpenTelemetryTracingOptions;
  const api = load();
  if (api === null) {
    logger?.warn('Runner: tracing is enabled but @opentelemetry/api cannot be loaded (no spans)');
    return NO_RUN_TRACER;
  }
  if (tracerProvider === undefined) return new OtelRunTracer(api, api.trace.getTracer(TRACER_NAME));
  let tracer: unknown;
  try {
    tracer = tracerProvider.getTracer(TRACER_NAME);
  } catch {
    throw new RunnerError('invalid_runner_options', { field: 'tracing' });
  }
  if (!isObject(tracer) || typeof (tracer as Tracer).startSpan !== 'function') throw new RunnerError('invalid_runner_options', { field: 'tracing' });
  return new OtelRunTracer(api, tracer as Tracer);
}

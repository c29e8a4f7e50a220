import type { Tracer } from '@opentelemetry/api';
import { RunnerError } from '../../runner.errors';
import { NO_RUN_TRACER, type RunTracer } from '../run-tracer';
import { readOptions } from '../../../shared/options/option-reader';
import { TRACER_NAME } from './gen-ai-attributes';
import type { OtelApiLoader } from './otel-api-loader';
import { OtelRunTracer } from './otel-run-spans';
import type { OpenTelemetryTracingOptions, RunnerTracerProvider } from './open-telemetry-tracing.types';

const isObject = (value: unknown) => typeof value === 'object' && value !== null;
const RULES = {
  tracerProvider: (value: unknown) => isObject(value) && typeof (value as RunnerTracerProvider).getTracer === 'function',
  logger: (value: unknown) => isObject(value) && typeof (value as { warn?: unknown }).warn === 'function',
};

/**
 * The OpenTelemetry tracer for `options` (see `openTelemetryTracing`), with the API from `load`: the
 * no-op tracer when it cannot be loaded (`logger` is told once), `invalid_runner_options {field:
 * 'tracing'}` for bad options or a provider whose `getTracer` throws or returns no tracer.
 */
export function resolveOtelRunTracer(options: unknown, load: OtelApiLoader): RunTracer {
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

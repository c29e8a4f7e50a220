import type { Tracer } from '@opentelemetry/api';
import { RunnerError } from '../../runner/runner.errors';
import { readOptions } from '../../shared/options/option-reader';
import { TRACER_NAME } from './gen-ai-attributes';
import { loadOtelApi, type OtelApiLoader } from './otel-api-loader';
import { OtelRunTracer } from './otel-run-spans';
import { NO_RUN_TRACER, type RunTracer } from './run-spans';
import type { RunnerTracerProvider, RunnerTracing } from './runner-tracing.types';

const hasGetTracer = (value: unknown) => typeof value === 'object' && value !== null && typeof (value as RunnerTracerProvider).getTracer === 'function';
const TRACING_RULES = { tracerProvider: hasGetTracer };

/** The option rule of `tracing` in `new Runner(options)`. */
export function isRunnerTracing(value: unknown): boolean {
  return typeof value === 'boolean' || readOptions(value, TRACING_RULES, { name: 'tracing', unknownKeys: 'refuse' }).ok;
}

/**
 * The tracer of a Runner for a valid `tracing` value: no-op when off or when the API cannot be loaded
 * (reported once through the logger); a provider whose `getTracer` throws or returns no tracer is
 * `invalid_runner_options {field: 'tracing'}`.
 */
export function resolveRunnerTracing(value: RunnerTracing | undefined, logger: { warn(line: string): void } | undefined, load: OtelApiLoader = loadOtelApi): RunTracer {
  if (value === undefined || value === false) return NO_RUN_TRACER;
  const api = load();
  if (api === null) {
    logger?.warn('Runner: tracing is enabled but @opentelemetry/api cannot be loaded (no spans)');
    return NO_RUN_TRACER;
  }
  const provider = value === true ? undefined : value.tracerProvider;
  if (provider === undefined) return new OtelRunTracer(api, api.trace.getTracer(TRACER_NAME));
  let tracer: unknown;
  try {
    tracer = provider.getTracer(TRACER_NAME);
  } catch {
    throw new RunnerError('invalid_runner_options', { field: 'tracing' });
  }
  if (typeof tracer !== 'object' || tracer === null || typeof (tracer as Tracer).startSpan !== 'function') throw new RunnerError('invalid_runner_options', { field: 'tracing' });
  return new OtelRunTracer(api, tracer as Tracer);
}

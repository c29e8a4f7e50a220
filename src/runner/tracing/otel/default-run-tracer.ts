import type { RunSpans, RunTracer } from '../run-tracer';
import { loadOtelApi, type OtelApiLoader } from './otel-api-loader';
import { resolveOtelRunTracer } from './otel-tracer-options';

/**
 * The tracer of a Runner given no `tracing` option: OpenTelemetry's global tracer when the app has
 * `@opentelemetry/api` installed (spans go wherever the app's OpenTelemetry SDK sends them, and nowhere
 * without one), the no-op tracer otherwise. The API is looked for at the first run, never when the
 * package loads, so an app without it loads nothing of it.
 */
export function defaultRunTracer(load: OtelApiLoader = loadOtelApi): RunTracer {
  let resolved: RunTracer | undefined;
  return {
    startRun(agentName: string, invocationId: string, runId: string | undefined): RunSpans {
      resolved ??= resolveOtelRunTracer({}, load);
      return resolved.startRun(agentName, invocationId, runId);
    },
  };
}

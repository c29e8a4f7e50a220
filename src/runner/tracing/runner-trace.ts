import type { InvocationScope } from '../invocation/invocation-scope';

/** Metadata keys a Runner event may carry: names and ids only (spec 03 §8). */
export interface RunnerTraceMetadata {
  readonly agent?: string;
  readonly model?: string;
  readonly tool?: string;
  readonly call_id?: string;
}

/** One observability event of the Runner. */
export interface RunnerTraceEvent extends RunnerTraceMetadata {
  readonly measurements?: { readonly duration_ms?: number };
  readonly attributes?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * Delivers one observability event (`runner.run.started`, `runner.model.call`, …) to the trace store
 * with the invocation signal as owner. Only names, ids, counts, durations and outcomes: never
 * content, arguments or results. Never throws, never waits.
 */
export function traceRunner(scope: InvocationScope, event: string, detail: RunnerTraceEvent = {}): void {
  const { measurements, attributes, ...names } = detail;
  const metadata: Record<string, string> = { invocation_id: scope.invocationId, session: scope.ref.sessionId, agent: names.agent ?? scope.options.root.name };
  if (scope.runId !== undefined) metadata.run_id = scope.runId;
  if (names.model !== undefined) metadata.model = names.model;
  if (names.tool !== undefined) metadata.tool = names.tool;
  if (names.call_id !== undefined) metadata.call_id = names.call_id;
  scope.options.trace.deliver(
    'observability',
    {
      event,
      timestamp_ms: scope.options.clock.wallNow(),
      metadata,
      ...(measurements === undefined ? {} : { measurements }),
      ...(attributes === undefined ? {} : { attributes }),
    },
    scope.signal,
  );
}

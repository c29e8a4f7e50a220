import { undeclaredNameDigest, UNKNOWN_TOOL_SUBJECT } from '../../policy/policy-name';
import type { InvocationScope } from '../invocation/invocation-scope';

/** Metadata keys a Runner event may carry: names and ids only (spec 03 §8). */
export interface RunnerTraceMetadata {
  readonly agent?: string;
  readonly model?: string;
  readonly tool?: string;
  /** With `tool: 'unknown_tool'`: the digest of the name the model made up (see {@link toolTraceNames}). */
  readonly tool_digest?: string;
  readonly call_id?: string;
}

/**
 * How a tool call is named in a trace record: a declared name (the agent's configuration) as it is;
 * a name the model made up as `'unknown_tool'` and the digest the audit decision records for it.
 */
export function toolTraceNames(name: string, declared: boolean): Pick<RunnerTraceMetadata, 'tool' | 'tool_digest'> {
  return declared ? { tool: name } : { tool: UNKNOWN_TOOL_SUBJECT, tool_digest: undeclaredNameDigest(name) };
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
  if (names.tool_digest !== undefined) metadata.tool_digest = names.tool_digest;
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

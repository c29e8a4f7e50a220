import type { PolicyDecision, PolicyOperation } from '../../policy/runtime-policy.types';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import type { JsonValue } from '../content.types';
import type { ToolCallOutcome } from '../tools/tool-call-step';

// The tracer the Runner calls at its observability points (spec 03 §6, §8). The Runner defines it and
// ships the no-op one; `openTelemetryTracing()` of the observability module implements it with spans.

/** How admission ended for an invocation. */
export type RunAdmissionOutcome = 'admitted' | 'rejected' | 'aborted';

/** A span the Runner's work runs inside. */
export interface WorkSpan {
  /** Runs `work` with this span as the active one (seen by instrumentations when a context manager is installed). */
  run<T>(work: () => T): T;
}

/** The `chat` span of one model call. */
export interface ChatSpan extends WorkSpan {
  /** Ends the span as succeeded, with the token counts the model reported (validated by the caller). */
  succeed(usage: { readonly inputTokens?: number; readonly outputTokens?: number }): void;
  /** Ends the span as failed with the code (and reason code) of the error the call turned into. */
  fail(error: unknown): void;
}

/** The `execute_tool` span of one tool call, from its preparation to its committed response. */
export interface ToolSpan extends WorkSpan {
  /** Names the span after the tool once the call resolved to a configured tool (a model-chosen name never shows). */
  identify(toolName: string): void;
  /** One policy decision about the call: `null` is an allow. */
  policy(operation: PolicyOperation, denied: PolicyDecision | null): void;
  /** Ends the span with the call's outcome; a `{success: false}` response sets status ERROR and `error.type` to its kind. */
  end(outcome: ToolCallOutcome, response?: JsonValue): void;
}

/**
 * The spans of one invocation, called by the Runner at its observability points (spec 03 §6, §8).
 * Every method never throws and records only names, configured ids, counts, durations, outcomes and
 * reason codes.
 */
export interface RunSpans {
  /** The admission wait, as an event on the run span. */
  admission(outcome: RunAdmissionOutcome, waitMs: number, reason?: string): void;
  /** A decision of the run's own checks (agent, input, final output), as an event on the run span: `null` is an allow. */
  policy(operation: PolicyOperation, denied: PolicyDecision | null): void;
  startChat(agentName: string, modelName: string | undefined): ChatSpan;
  startTool(agentName: string): ToolSpan;
  /** Ends every span still open, then the run span, with the run's outcome and error code. */
  end(outcome: string, code: string | undefined, details: ErrorDetails | undefined): void;
}

/**
 * Starts the spans of each invocation of one Runner: the Runner's `tracing` option. `startRun` and
 * every method of what it returns must never throw.
 */
export interface RunTracer {
  startRun(agentName: string, invocationId: string, runId: string | undefined): RunSpans;
}

const runWork = <T>(work: () => T): T => work();
const NO_CHAT_SPAN: ChatSpan = Object.freeze({ run: runWork, succeed: () => undefined, fail: () => undefined });
const NO_TOOL_SPAN: ToolSpan = Object.freeze({ run: runWork, identify: () => undefined, policy: () => undefined, end: () => undefined });

/** The spans of an invocation without tracing: nothing is recorded. */
export const NO_RUN_SPANS: RunSpans = Object.freeze({
  admission: () => undefined,
  policy: () => undefined,
  startChat: () => NO_CHAT_SPAN,
  startTool: () => NO_TOOL_SPAN,
  end: () => undefined,
});

/** The tracer of a Runner without tracing: the default of the `tracing` option. */
export const NO_RUN_TRACER: RunTracer = Object.freeze({ startRun: () => NO_RUN_SPANS });

import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import type { JsonValue, Message } from '../content.types';
import type { ResumeRequest, RunRequest, RunStream } from '../runner.types';
import type { SessionEvent } from '../session.types';

/**
 * What the registry needs of a Runner (spec 03 §5, §7, §9). The `Runner` class fits it; the
 * registry addresses runners by the root agent's name.
 */
export interface RegistryRunner {
  /** The root agent. */
  readonly agent: { readonly name: string };
  readonly appName: string;
  /**
   * One invocation: yields each stored event, returns `{status: 'completed' | 'paused', ...}` or
   * throws `RunnerError` (`cancelled` once the request's signal aborts, `timeout` after `runTimeoutMs`).
   */
  runAsync(request: RunRequest): RunStream;
  /** Answers a pending confirmation; same shape as `runAsync`. */
  resumeAsync(request: ResumeRequest): RunStream;
  /** Throws `RunnerError('resume_input_required', {field})` synchronously for a bad decision (§7 step 1). */
  checkResumeInput(input: { readonly confirmed: unknown; readonly payload?: unknown }): void;
  /** Removes the continuations a paused invocation saved in its session (cancel of a paused run); its value is ignored. */
  discardContinuations(ref: { readonly userId: string; readonly sessionId: string; readonly invocationId: string }): Promise<unknown>;
}

/** Where a run is (spec 03 §9): `pending` awaits admission; the last four are final. */
export type RunStatus = 'pending' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled' | 'timed_out';

/** The statuses a run ends in. */
export type FinishedRunStatus = 'completed' | 'failed' | 'cancelled' | 'timed_out';

/** The error of a run: a code and content-free details. */
export interface RunError {
  readonly code: string;
  readonly details: ErrorDetails;
}

/** What `get(runId)` and the HTTP routes answer: a frozen record without content. */
export interface RunStatusRecord {
  readonly schema_version: 1;
  readonly run_id: string;
  /** The root agent's name. */
  readonly agent: string;
  readonly session_id: string;
  /** `null` while `pending`; set once admission granted. */
  readonly invocation_id: string | null;
  readonly status: RunStatus;
  /** The calls awaiting confirmation while `paused`; empty otherwise. */
  readonly pending_call_ids: readonly string[];
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  /** The `seq` of the run's last stream item, 0 before the first. */
  readonly last_seq: number;
  /** Why the run failed, timed out or was cancelled, or why its last resume failed; `null` otherwise. */
  readonly error: RunError | null;
}

/** A stored session event of the run. */
export interface RunEventItem {
  readonly seq: number;
  readonly type: 'event';
  readonly event: SessionEvent;
}

/** The run paused awaiting the confirmation of these calls. */
export interface RunPausedItem {
  readonly seq: number;
  readonly type: 'paused';
  readonly pending_call_ids: readonly string[];
}

/** A confirmation was accepted and the run resumes. */
export interface RunResumedItem {
  readonly seq: number;
  readonly type: 'resumed';
  /** The call the decision answered, with `confirmed_by` (the `/runs` route always gives them). */
  readonly call_id?: string;
  /** The principal id of whoever confirmed or rejected the call: an identifier, never content. */
  readonly confirmed_by?: string;
}

/** A resume failed before it started executing (admission, say): the run is `paused` again. */
export interface RunResumeFailedItem {
  readonly seq: number;
  readonly type: 'resume_failed';
  readonly error: RunError;
}

/** The last item of every run, exactly once. */
export interface RunTerminalItem {
  readonly seq: number;
  readonly type: 'terminal';
  readonly status: FinishedRunStatus;
  /** For `failed` and `timed_out`. */
  readonly error?: RunError;
  /** The cancel reason, for `cancelled`. */
  readonly cancelled?: string;
}

/** One item of a run's stream, numbered 1..n per run (spec 03 §9). */
export type RunStreamItem = RunEventItem | RunPausedItem | RunResumedItem | RunResumeFailedItem | RunTerminalItem;

/** What `start` takes. */
export interface StartRunRequest {
  /** The root agent's name. */
  readonly agent: string;
  readonly userId: string;
  /** The id of the principal the run belongs to (the `/runs` routes give the caller's). @default none: only `authorizeRun` grants access */
  readonly owner?: string;
  /** `^[A-Za-z0-9._:-]{1,128}$`; generated when absent. */
  readonly sessionId?: string;
  readonly message: Message;
  /** @default false */
  readonly durable?: boolean;
}

/** What `start` answers, before the run is admitted. */
export interface RunStarted {
  readonly run_id: string;
  readonly session_id: string;
}

/** A human decision on a pending call. */
export interface ConfirmationInput {
  readonly confirmed: boolean;
  readonly payload?: JsonValue;
}

/** Options of `subscribe`. */
export interface SubscribeOptions {
  /** Replay the items after this `seq`. @default 0 (everything still buffered) */
  readonly afterSeq?: number;
}

/** The registry itself, for readiness. */
export interface RunRegistryStatus {
  /** False once `shutdown()` began: new starts and resumes are refused. */
  readonly accepting: boolean;
  /** Runs with an invocation executing in this process. */
  readonly active: number;
}

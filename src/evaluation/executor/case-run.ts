import type { JsonValue } from '../../json';
import type { Content, Message } from '../../runner/content.types';
import { RunnerError } from '../../runner/runner.errors';
import type { RunRequest, RunResult, RunStream } from '../../runner/runner.types';
import type { SessionEvent, SessionService } from '../../runner/session.types';
import type { Clock } from '../../shared/time/clock';
import { timeoutSignal } from '../../shared/time/timeout-signal';
import type { TrajectoryCall } from './tool-trajectory';

/** The user every evaluation run is made as (spec 05 §7). */
export const EVAL_USER_ID = 'agent_runtime_eval';

/**
 * What the executor needs of a Runner: the `Runner` class fits. `sessionService` is optional so the
 * registry's narrower runner type fits too; without it the case's session is not deleted.
 */
export interface EvalRunner {
  readonly appName: string;
  runAsync(request: RunRequest): RunStream;
  readonly sessionService?: Pick<SessionService, 'deleteSession'>;
}

/** One case to run. */
export interface CaseRunRequest {
  /** `<job id>-<case index>`: inside the Runner's session-id pattern. */
  readonly sessionId: string;
  readonly input: JsonValue;
  /** The job's signal: its abort ends the job, not just the case. */
  readonly jobSignal: AbortSignal;
  /** The case's own bound (`case_timeout_ms`); none when `undefined`. */
  readonly caseTimeoutMs: number | undefined;
  readonly clock: Clock;
}

/** How one case went, before scoring: the full output and trajectory (truncation is the record's business). */
export interface CaseRun {
  /** The code the case ended with, or `null` when the run completed. */
  readonly error: string | null;
  /** The text parts of the final output, joined with `\n`; empty when the case ended with an error. */
  readonly output: string;
  /** Name and arguments of every call of the run's `model_turn` events, in order (denied and unknown ones too). */
  readonly toolCalls: readonly TrajectoryCall[];
}

const CASE_TIMEOUT = 'case_timeout';

/**
 * Runs one case through `runner` (spec 05 §7): one fresh invocation as {@link EVAL_USER_ID} in the
 * session `request.sessionId`, on the job's signal bounded by the case timeout, drained to its end.
 * A Runner error gives its code, the case's own timeout `case_timeout`, a pause `run_paused`, any
 * other failure `evaluation_case_failed`. The session is deleted afterwards on every path (a failing
 * delete is ignored). When the job's signal aborts, this rejects with its reason instead.
 */
export async function runEvalCase(runner: EvalRunner, request: CaseRunRequest): Promise<CaseRun> {
  const { sessionId, jobSignal } = request;
  const bound = timeoutSignal(jobSignal, request.caseTimeoutMs, request.clock, CASE_TIMEOUT);
  const toolCalls: TrajectoryCall[] = [];
  try {
    const stream = runner.runAsync({ userId: EVAL_USER_ID, sessionId, message: request.input as unknown as Message, signal: bound.signal });
    const result = await drain(stream, toolCalls);
    if (result.status === 'paused') return ended('run_paused', toolCalls);
    return { error: null, output: outputText(result.output), toolCalls };
  } catch (error) {
    if (jobSignal.aborted) throw jobSignal.reason;
    if (bound.timedOut) return ended(CASE_TIMEOUT, toolCalls);
    return ended(RunnerError.isRunnerError(error) ? error.code : 'evaluation_case_failed', toolCalls);
  } finally {
    bound.dispose();
    await deleteSessionQuietly(runner, sessionId);
  }
}

async function drain(stream: RunStream, toolCalls: TrajectoryCall[]): Promise<RunResult> {
  for (;;) {
    const next = await stream.next();
    if (next.done === true) return next.value;
    collectToolCalls(next.value, toolCalls);
  }
}

/** A plugin's `onEventCallback` may have replaced the content, so nothing about its shape is assumed. */
function collectToolCalls(event: SessionEvent, into: TrajectoryCall[]): void {
  if (event.kind !== 'model_turn') return;
  const calls = (event.content as { readonly tool_calls?: unknown } | null)?.tool_calls;
  if (!Array.isArray(calls)) return;
  for (const call of calls as ReadonlyArray<{ readonly name?: unknown; readonly args?: JsonValue } | null>) {
    if (typeof call?.name === 'string') into.push({ name: call.name, args: call.args ?? null });
  }
}

function outputText(output: Content | undefined): string {
  const parts = Array.isArray(output?.parts) ? output.parts : [];
  return parts.flatMap((part) => ('text' in part && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

function ended(error: string, toolCalls: readonly TrajectoryCall[]): CaseRun {
  return { error, output: '', toolCalls };
}

async function deleteSessionQuietly(runner: EvalRunner, sessionId: string): Promise<void> {
  try {
    await runner.sessionService?.deleteSession({ appName: runner.appName, userId: EVAL_USER_ID, sessionId });
  } catch {
    // the session is the Runner's; a delete that fails must not change the case's verdict
  }
}

import type { Permit } from '../../admission/permit';
import type { TerminalPhase } from '../../ledger/invocation-record';
import { untilAborted } from '../../shared/async/abortable';
import { handled } from '../../shared/async/handled-promise';
import type { ReadonlyContext } from '../agent.types';
import { linksOf, runObservers } from '../loop/hook-chain';
import { traceRunner } from '../tracing/runner-trace';
import { cancelReasonOf, HANDOVER_REASON, type InvocationScope } from './invocation-scope';
import { admissionFailedError, invocationRequest } from './invocation-admission';
import { RunnerError } from '../runner.errors';
import type { RunResult, RunStream } from '../runner.types';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { emitSafely } from '../../telemetry/telemetry-sink';
import { logField } from '../../shared/text/log-escape';

/** What the body of an invocation needs from its lifecycle. */
export interface InvocationBody {
  /** Work done before admission (validation, taking a continuation). */
  readonly beforeAdmission?: () => Promise<void>;
  /** Undoes `beforeAdmission` when admission or the durable claim fails. */
  readonly onStartFailed?: () => Promise<void>;
  /** Claims or creates the durable record, right after admission. */
  readonly afterAdmission?: () => Promise<void>;
  /** Steps 2–8. */
  readonly run: (hooksStarted: () => void) => Promise<RunResult>;
  readonly onAdmitted?: (info: { readonly invocation_id: string }) => void;
}

/**
 * The generator of one invocation: the body runs in the background and each stored event is
 * yielded once stored; closing the generator early cancels the invocation (`consumer_closed`).
 */
export async function* invocationStream(scope: InvocationScope, body: InvocationBody, signal: AbortSignal | undefined): RunStream {
  const task = handled(runLifecycle(scope, body, signal).then((result) => scope.channel.close(result), (error: unknown) => scope.channel.fail(error)));
  let settled = false;
  try {
    for (;;) {
      const next = await scope.channel.next();
      if (next.done === true) {
        settled = true;
        return next.value;
      }
      yield next.value;
    }
  } catch (error) {
    settled = true;
    throw error;
  } finally {
    if (!settled) {
      scope.abort({ code: 'cancelled', reason: 'consumer_closed' });
      await task;
    }
  }
}

/**
 * Steps 1 and 9 around the body (spec 03 §6.1, §6.9): the ends that abort the invocation
 * controller (caller signal, run timeout), admission, and on every path the ledger finish, the
 * release, the toolsets' close and the final abort.
 */
async function runLifecycle(scope: InvocationScope, body: InvocationBody, signal: AbortSignal | undefined): Promise<RunResult> {
  const { options } = scope;
  options.trace.begin();
  traceRunner(scope, 'runner.run.started');
  const unbind = bindEnds(scope, signal);
  let permit: Permit | null = null;
  let hooksStarted = false;
  let result: RunResult | undefined;
  let failure: unknown;
  try {
    await body.beforeAdmission?.();
    try {
      permit = await admit(scope);
      try {
        body.onAdmitted?.({ invocation_id: scope.invocationId });
      } catch {
        options.logger?.warn('Runner: onAdmitted threw (ignored)');
      }
      await body.afterAdmission?.();
    } catch (error) {
      await body.onStartFailed?.().catch(() => undefined);
      throw error;
    }
    result = await body.run(() => (hooksStarted = true));
  } catch (error) {
    failure = scope.failureOf(error);
    if (hooksStarted && !isEnd(failure)) {
      const input = { ctx: scope.context(options.root.name), error: failure };
      await runObservers('on_run_error', linksOf(options.plugins, 'onRunErrorCallback'), input, () => undefined, scope).catch(() => undefined);
    }
  } finally {
    failure = await finishDurable(scope, result, failure);
    if (permit !== null) {
      scope.modelReports.finish();
      await releaseQuietly(scope, permit);
    }
    await closeToolsets(scope);
    unbind();
    scope.controller.abort('invocation_ended');
    emitInvocation(scope, result, failure);
    traceFinished(scope, result, failure);
  }
  if (result === undefined || failure !== undefined) throw failure;
  return result;
}

function isEnd(error: unknown): boolean {
  return RunnerError.isRunnerError(error) && (error.code === 'cancelled' || error.code === 'timeout' || error.code === 'invocation_fence_lost');
}

function bindEnds(scope: InvocationScope, signal: AbortSignal | undefined): () => void {
  const { clock, runTimeoutMs } = scope.options;
  const onAbort = () =>
    scope.abort(signal?.reason === HANDOVER_REASON ? { code: 'cancelled', reason: 'handover', handover: true } : { code: 'cancelled', reason: cancelReasonOf(signal?.reason) });
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const timer = runTimeoutMs === null ? null : clock.setTimer(() => scope.abort({ code: 'timeout', timeoutMs: runTimeoutMs }), runTimeoutMs);
  return () => {
    signal?.removeEventListener('abort', onAbort);
    if (timer !== null) clock.clearTimer(timer);
  };
}

/** Step 1: admission with the invocation signal as owner; nothing is stored before it succeeds. */
async function admit(scope: InvocationScope): Promise<Permit | null> {
  scope.throwIfEnded();
  const admission = scope.options.admission;
  if (admission === null) return null;
  const { clock } = scope.options;
  const started = clock.monotonicNow();
  try {
    const agent = scope.options.root.name;
    const request = invocationRequest(admission, scope.signal, { agent, userId: scope.userId, sessionId: scope.ref.sessionId });
    // the invocation signal is the owner: the controller itself drops the queue entry or revokes the permit on abort
    const permit = await admission.controller.acquire(agent, request);
    scope.spans.admission('admitted', clock.monotonicNow() - started);
    scope.modelReports.attach(permit);
    return permit;
  } catch (error) {
    const failed = admissionFailedError(error);
    if (scope.end === null) scope.spans.admission('rejected', clock.monotonicNow() - started, failed.details?.reason as string);
    else scope.spans.admission('aborted', clock.monotonicNow() - started);
    scope.throwIfEnded();
    throw failed;
  }
}

async function finishDurable(scope: InvocationScope, result: RunResult | undefined, failure: unknown): Promise<unknown> {
  const durable = scope.durable;
  if (durable === null) return failure;
  const code = RunnerError.isRunnerError(failure) ? failure.code : failure === undefined ? undefined : 'internal_error';
  if (code === 'invocation_fence_lost' || result?.status === 'paused' || scope.handedOver) {
    durable.stop();
    return failure;
  }
  const phase: TerminalPhase = code === undefined ? 'completed' : code === 'cancelled' ? 'cancelled' : code === 'timeout' ? 'timed_out' : 'failed';
  try {
    await durable.finish(phase, code);
    return failure;
  } catch (error) {
    // a completed run whose end was not recorded is not reported as completed
    return failure ?? error;
  }
}

async function releaseQuietly(scope: InvocationScope, permit: Permit): Promise<void> {
  try {
    await scope.options.admission?.controller.release(permit);
  } catch {
    scope.options.logger?.warn(`Runner: admission release failed for agent=${logField(scope.options.root.name)} (ignored)`);
  }
}

/** Closes the materialised toolsets; an ended invocation starts each close but does not wait for it. */
async function closeToolsets(scope: InvocationScope): Promise<void> {
  for (const toolset of scope.materialized) {
    const closing = handled(Promise.resolve().then(() => toolset.close?.()).then(undefined, () => scope.options.logger?.warn(`Runner: toolset close failed (ignored)`)));
    if (!scope.signal.aborted) await untilAborted(closing, scope.signal).catch(() => undefined);
  }
}

/** `runner.run.finished` with the final status and, for a failure, its code as `error.type`. */
function traceFinished(scope: InvocationScope, result: RunResult | undefined, failure: unknown): void {
  const code = failure === undefined ? undefined : RunnerError.isRunnerError(failure) ? failure.code : 'internal_error';
  const outcome = code === undefined ? (result?.status ?? 'completed') : code === 'cancelled' ? 'cancelled' : code === 'timeout' ? 'timed_out' : 'failed';
  // delivered after the final abort: the receiver's owner binding ignores an aborted owner
  traceRunner(scope, 'runner.run.finished', { attributes: code === undefined ? { outcome } : { outcome, 'error.type': code } });
  scope.spans.end(outcome, code, RunnerError.isRunnerError(failure) ? failure.details : undefined);
}

function emitInvocation(scope: InvocationScope, result: RunResult | undefined, failure: unknown): void {
  const events = scope.events;
  if (events === null) return;
  const outcome = failure === undefined ? (result?.status ?? 'completed') : RunnerError.isRunnerError(failure) ? failure.code : 'internal_error';
  emitSafely(events, TelemetryEvents.runnerInvocation, {
    agent_id: scope.options.root.name,
    outcome,
    duration_ms: scope.options.clock.monotonicNow() - scope.startedAt,
    model_calls: scope.modelCalls,
    tool_calls: scope.toolCalls,
    policy_denials: scope.policyDenials,
  });
}

/** Runs `afterRunCallback` observers; a throw is logged without content and ignored. */
export async function afterRun(scope: InvocationScope, ctx: ReadonlyContext, output: unknown): Promise<void> {
  await runObservers(
    'after_run',
    linksOf(scope.options.plugins, 'afterRunCallback'),
    { ctx, output },
    (owner) => scope.options.logger?.warn(`Runner: afterRunCallback of plugin ${logField(owner)} threw (ignored)`),
    scope,
  );
}

import { HANDOVER_REASON } from '../invocation/invocation-scope';
import { isValidId } from '../../shared/ids/id-rule';
import { errorEnding, runErrorOf } from './run-outcome';
import { RunnerError } from '../runner.errors';
import type { RunResult, RunStream } from '../runner.types';
import type { SessionEvent as RunStreamEvent } from '../session.types';
import type { Persist } from './run-write-retry';
import { EXECUTING, RUNNING, type RunWriter } from './run-writer';

/** A run whose invocation executes in this process. */
export interface ActiveRun {
  readonly controller: AbortController;
  /** The invocation began executing: admitted, or it stored an event. */
  started: boolean;
  /** The invocation's stream ended (returned or threw): aborting it can change nothing any more. */
  ended: boolean;
  /** The driver's store writes, in order. */
  writes: Promise<unknown>;
  /** Settles when the driver is done (never rejects). */
  done: Promise<void>;
}

/** Opens the invocation (`runAsync` or `resumeAsync`) with the run's signal and admission callback. */
export type Invoke = (signal: AbortSignal, onAdmitted: (info: { readonly invocation_id: string }) => void) => RunStream;

/**
 * The background task of one invocation: stores each event it yields as an item, then the pause or
 * the terminal item its result or error implies. `previous` is `false` for a start and the pending
 * call ids for a resume: a resume that fails before it started executing (admission, say) writes
 * `resume_failed` and puts those ids back. Once the run is finished by someone else (a cancel), the
 * invocation's later events are discarded and its stream closed. The pause or terminal write goes
 * through `persist`, which repeats it until it lands. Never rejects.
 */
export async function driveInvocation(writer: RunWriter, runId: string, active: ActiveRun, previous: readonly string[] | false, invoke: Invoke, persist: Persist): Promise<void> {
  let stream: RunStream | undefined;
  let streamEnded = false;
  try {
    stream = invoke(active.controller.signal, (info) => admitted(writer, runId, active, previous === false, info));
    for (;;) {
      const next = await stream.next().catch((error: unknown) => {
        streamEnded = true;
        active.ended = true;
        throw error;
      });
      if (next.done) {
        streamEnded = true;
        active.ended = true;
        await serialized(active, () => persist(() => settle(writer, runId, next.value)));
        return;
      }
      active.started = true;
      const event = next.value;
      const stored = await serialized(active, () => writer.append(runId, { type: 'event', event }, { expect: EXECUTING, owned: true }));
      if (!stored.written) return;
    }
  } catch (error) {
    await serialized(active, () => persist(() => failed(writer, runId, active, previous, error))).catch(() => undefined);
  } finally {
    // a cancelled run, or a store that failed mid-run: the invocation must not hang at its next yield
    if (stream && !streamEnded) await closeQuietly(stream);
  }
}

function admitted(writer: RunWriter, runId: string, active: ActiveRun, first: boolean, info: { readonly invocation_id: string }): void {
  if (active.started) return;
  active.started = true;
  const invocationId = typeof info === 'object' && info !== null ? info.invocation_id : undefined;
  if (!first || !isValidId(invocationId)) return;
  serialized(active, () => writer.update(runId, { status: 'running', invocation_id: invocationId }, ['pending'], true)).catch(() => undefined);
}

async function settle(writer: RunWriter, runId: string, result: RunResult): Promise<void> {
  const invocation = isValidId(result?.invocation_id) ? { invocation_id: result.invocation_id } : {};
  if (result?.status === 'paused' && Array.isArray(result.pending_call_ids)) {
    const pending = Object.freeze([...result.pending_call_ids]);
    await writer.append(runId, { type: 'paused', pending_call_ids: pending }, { patch: { status: 'paused', pending_call_ids: pending, ...invocation }, expect: EXECUTING, owned: true });
  } else if (result?.status === 'completed') {
    await writer.end(runId, { terminal: Object.freeze({ type: 'terminal', status: 'completed' }), patch: { status: 'completed', pending_call_ids: [], ...invocation } }, EXECUTING, true);
  } else {
    await writer.end(runId, errorEnding(undefined), EXECUTING, true);
  }
}

async function failed(writer: RunWriter, runId: string, active: ActiveRun, previous: readonly string[] | false, error: unknown): Promise<void> {
  // handed over to another instance: the run goes on there, nothing ends here
  if (active.controller.signal.reason === HANDOVER_REASON) return;
  const runError = runErrorOf(error);
  const beforeStart = previous !== false && runError.code !== 'cancelled' && (runError.code === 'admission_failed' || !active.started);
  if (!beforeStart) {
    await writer.end(runId, errorEnding(error), EXECUTING, true);
    return;
  }
  await writer.append(runId, { type: 'resume_failed', error: runError }, { patch: { status: 'paused', pending_call_ids: previous, error: runError }, expect: RUNNING, owned: true });
}

/** Runs `write` after the run's earlier writes, so its items and status changes keep their order. */
function serialized<T>(active: ActiveRun, write: () => Promise<T>): Promise<T> {
  const result = active.writes.then(write);
  active.writes = result.catch(() => undefined);
  return result;
}

function closeQuietly(stream: RunStream): Promise<void> {
  return stream.return(undefined as never).then(
    () => undefined,
    () => undefined,
  );
}

/** Attempts of a takeover resume that meets `invocation_owned`, and the pause before the second (doubling, at most 2 s). */
const OWNED_ATTEMPTS = 8;
const OWNED_FIRST_PAUSE_MS = 100;

/**
 * The resume of a run taken over from a dead instance (spec 08 §4). The ledger tells an owner's
 * liveness by its own instance lock, which the server may release a moment after the cluster lock
 * that made the run an orphan: a claim refused with `invocation_owned` before anything ran is
 * retried a few times (`pause(attempt)` waits), then the error ends the run as usual.
 */
export async function* resumeTakenOver(open: () => RunStream, pause: (ms: number) => Promise<void>): RunStream {
  for (let attempt = 1; ; attempt++) {
    const stream = open();
    let first: IteratorResult<RunStreamEvent, RunResult>;
    try {
      first = await stream.next();
    } catch (error) {
      if (attempt >= OWNED_ATTEMPTS || !RunnerError.isRunnerError(error) || error.code !== 'invocation_owned') throw error;
      await pause(Math.min(2000, OWNED_FIRST_PAUSE_MS * 2 ** (attempt - 1)));
      continue;
    }
    if (first.done) return first.value;
    yield first.value;
    return yield* stream;
  }
}

import type { JsonObject } from '../content.types';
import { continuationsDelta, continuationsOf, type Continuation } from './continuations';
import { RunnerError } from '../runner.errors';
import type { SessionRecord, SessionRef, SessionService } from '../session.types';

const ATTEMPTS = 8;

/**
 * Read-modify-write of the continuations in a session's state with `expectedVersion`, re-read on a
 * conflict: concurrent pauses and resumes of one session never overwrite each other's entries.
 * `change` returns the new map, or `null` to write nothing.
 */
async function changeContinuations(
  service: SessionService,
  ref: SessionRef,
  change: (current: Readonly<Record<string, Continuation>>) => Record<string, Continuation> | null,
): Promise<SessionRecord | null> {
  for (let attempt = 1; ; attempt += 1) {
    const session = await service.getSession(ref);
    if (session === undefined) return null;
    const next = change(continuationsOf(session.state));
    if (next === null) return session;
    try {
      return await service.updateState(ref, continuationsDelta(next), { expectedVersion: session.state_version });
    } catch (error) {
      if (!(RunnerError.isRunnerError(error) && error.code === 'session_state_conflict') || attempt === ATTEMPTS) throw error;
    }
  }
}

/** Adds the continuations of a paused turn; returns the new state. */
export async function saveContinuations(service: SessionService, ref: SessionRef, added: readonly Continuation[]): Promise<JsonObject> {
  const updated = await changeContinuations(service, ref, (current) => {
    const next = { ...current };
    for (const continuation of added) next[continuation.call_id] = continuation;
    return next;
  });
  if (updated === null) throw new RunnerError('session_not_found', {});
  return updated.state;
}

/** Removes and returns one call's continuation; absent, or taken by a concurrent resume → `invocation_not_found`. */
export async function takeContinuation(service: SessionService, ref: SessionRef, invocationId: string, callId: string): Promise<Continuation> {
  let taken: Continuation | undefined;
  await changeContinuations(service, ref, (current) => {
    const found = Object.prototype.hasOwnProperty.call(current, callId) ? current[callId] : undefined;
    if (found === undefined || found.invocation_id !== invocationId) {
      taken = undefined;
      return null;
    }
    taken = found;
    const { [callId]: _taken, ...rest } = current;
    return rest;
  });
  if (taken === undefined) throw new RunnerError('invocation_not_found', {});
  return taken;
}

/** Puts a taken continuation back (its resume could not start), so a later resume can succeed. */
export async function restoreContinuation(service: SessionService, ref: SessionRef, continuation: Continuation): Promise<void> {
  await changeContinuations(service, ref, (current) => ({ ...current, [continuation.call_id]: continuation }));
}

/** Drops every continuation of an invocation (cancel of a paused run); the ids that were pending. */
export async function discardInvocationContinuations(service: SessionService, ref: SessionRef, invocationId: string): Promise<string[]> {
  let dropped: string[] = [];
  await changeContinuations(service, ref, (current) => {
    dropped = Object.values(current)
      .filter((continuation) => continuation.invocation_id === invocationId)
      .map((continuation) => continuation.call_id);
    if (dropped.length === 0) return null;
    return Object.fromEntries(Object.entries(current).filter(([, continuation]) => continuation.invocation_id !== invocationId));
  });
  return dropped;
}

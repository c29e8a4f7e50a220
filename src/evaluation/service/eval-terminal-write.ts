import { frozenJsonCopy } from '../../json/json-copy';
import type { Clock } from '../../shared/time/clock';
import { exponentialBackoff, retry } from '../../shared/time/retry';
import { EvalServiceError } from '../eval.errors';
import type { EvalJobRecord, EvalPhase, EvalScope, EvalStore, EvalTransitionFields } from '../eval.types';

/** A completed result the store refuses for its size fails the job with the store's code. */
const SIZE_CODES = new Set(['eval_record_too_large', 'eval_scope_bytes_exceeded', 'eval_store_bytes_exceeded']);
/**
 * A terminal write that meets a database outage is retried for this long on the clock (pauses of
 * 250 ms doubling to 2 s), so a blink of a few seconds loses no outcome; past it the service stops
 * and its next generation fails the row (spec 05 §6.1).
 */
export const TERMINAL_WRITE_BOUND_MS = 10_000;
const TERMINAL_WRITE_FIRST_RETRY_MS = 250;
const TERMINAL_WRITE_MAX_RETRY_MS = 2000;

/** The running job a terminal phase is written for. */
export interface TerminalWriteTarget {
  readonly store: EvalStore;
  readonly clock: Clock;
  readonly scope: EvalScope;
  readonly jobId: string;
}

/**
 * Writes the terminal phase of a running job (spec 05 §5.1), retrying a database outage
 * (`eval_store_unavailable`) for up to {@link TERMINAL_WRITE_BOUND_MS}. A completed result that is not plain JSON fails the job
 * with `invalid_task_outcome`; one the store refuses for its size fails it with the store's code.
 * Any other failure rejects: the caller stops the service rather than lose the outcome (§5.2).
 */
export async function writeTerminal(target: TerminalWriteTarget, phase: EvalPhase, fields: EvalTransitionFields): Promise<EvalJobRecord> {
  const write = (to: EvalPhase, with_: EvalTransitionFields) =>
    retry(() => target.store.transition(target.scope, target.jobId, ['running'], to, with_), {
      attempts: Infinity,
      delayMs: exponentialBackoff(TERMINAL_WRITE_FIRST_RETRY_MS, TERMINAL_WRITE_MAX_RETRY_MS),
      maxElapsedMs: TERMINAL_WRITE_BOUND_MS,
      retryable: (error) => EvalServiceError.isEvalServiceError(error) && error.code === 'eval_store_unavailable',
    }, target.clock);
  if (phase !== 'completed') return write(phase, fields);
  let result: EvalTransitionFields['result'];
  try {
    result = frozenJsonCopy(fields.result) as EvalTransitionFields['result'];
  } catch {
    return write('failed', { reason: 'invalid_task_outcome' });
  }
  try {
    return await write('completed', { result });
  } catch (error) {
    if (EvalServiceError.isEvalServiceError(error) && SIZE_CODES.has(error.code)) return write('failed', { reason: error.code });
    throw error;
  }
}

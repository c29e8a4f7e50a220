import { systemClock, type Clock } from '../shared/time/clock';
import { exponentialBackoff, retry } from '../shared/time/retry';
import type { InvocationLedger } from './invocation-ledger';
import type { InvocationRecord, TerminalPhase } from './invocation-record';
import { LedgerError } from './ledger.errors';

/** Bounds of {@link finishWithRetry}. */
export interface FinishRetryOptions {
  /** Attempts in all, the first one included. @default 4 */
  attempts?: number;
  /** Pause before the first retry, doubling on each further one. @default 100 */
  initialDelayMs?: number;
  /** Longest pause between attempts. @default 1000 */
  maxDelayMs?: number;
  /** No retry starts whose pause would end later than this after the first attempt. @default 5000 */
  maxElapsedMs?: number;
  /** Clock of the pauses. @default systemClock */
  clock?: Clock;
  /** Aborting stops further retries. @default none */
  signal?: AbortSignal;
}

/** Failures after which nothing was committed, or the answer of a commit was lost. */
const RETRIED = new Set(['transaction_aborted', 'ledger_unavailable']);

/**
 * `ledger.finish(...)`, retried with a bound when the database fails (`transaction_aborted`,
 * `ledger_unavailable`), with pauses on the clock. `finish` is fenced, so a retry never writes
 * twice: when an earlier attempt committed but its answer was lost, the retry answers
 * `stale_owner` (the row is no longer running under the token). That `stale_owner`, and only on a
 * retry, counts as done when the record now shows the requested terminal phase and no owner; the
 * record is returned. Otherwise the failure is thrown: `stale_owner` then means another owner (a
 * claim after the lease ended, or a recovery) ended the invocation differently, and the caller's
 * result was not recorded. A different owner that ended it in the same phase cannot be told apart;
 * the invocation then holds the phase the caller asked for, which is what at-least-once promises.
 */
export async function finishWithRetry(
  ledger: Pick<InvocationLedger, 'finish' | 'get'>,
  id: string,
  token: string,
  phase: TerminalPhase,
  outcome: unknown,
  checkpoint: unknown,
  options: FinishRetryOptions = {},
): Promise<InvocationRecord> {
  const { attempts = 4, initialDelayMs = 100, maxDelayMs = 1000, maxElapsedMs = 5000, clock = systemClock, signal } = options;
  let failedBefore = false;
  return retry(
    async () => {
      try {
        return await ledger.finish(id, token, phase, outcome, checkpoint);
      } catch (error) {
        if (failedBefore && LedgerError.isLedgerError(error) && error.code === 'stale_owner') {
          const record = await ledger.get(id);
          if (record && record.phase === phase && !record.owned) return record;
        }
        failedBefore = true;
        throw error;
      }
    },
    {
      attempts,
      delayMs: exponentialBackoff(initialDelayMs, maxDelayMs),
      maxElapsedMs,
      retryable: (error) => LedgerError.isLedgerError(error) && RETRIED.has(error.code),
      ...(signal ? { signal } : {}),
    },
    clock,
  );
}

import type { Clock } from './clock';
import { sleep } from './timeout';

/** How {@link retry} repeats a failing operation. */
export interface RetryPolicy {
  /** Attempts in all, the first one included (1 = no retry). */
  readonly attempts: number;
  /** Pause before retry `n` (1-based), in ms: a constant, or a function such as {@link exponentialBackoff}. */
  readonly delayMs: number | ((retry: number) => number);
  /** Whether a failure may be retried; any other failure is thrown at once. */
  readonly retryable: (error: unknown) => boolean;
  /**
   * Bound on the whole run, in ms on the clock: no retry starts whose pause would end after it.
   * @default Infinity
   */
  readonly maxElapsedMs?: number;
  /** Aborting stops the pauses: the last failure is thrown. @default none */
  readonly signal?: AbortSignal;
}

/**
 * Runs `work(attempt)` (attempt 1, 2, …) until it resolves, a failure is not retryable, the
 * attempts are used up or the next pause would exceed `maxElapsedMs`; then the last failure is
 * thrown as it was. Pauses run on `clock`.
 *
 * @example
 * await retry(() => lock.connect(), { attempts: 3, delayMs: 500, retryable: (e) => classifyFailure(e).connection }, clock);
 */
export async function retry<T>(work: (attempt: number) => Promise<T>, policy: RetryPolicy, clock: Clock): Promise<T> {
  const startedAt = clock.monotonicNow();
  const maxElapsedMs = policy.maxElapsedMs ?? Infinity;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work(attempt);
    } catch (error) {
      if (attempt >= policy.attempts || !policy.retryable(error)) throw error;
      const pause = typeof policy.delayMs === 'number' ? policy.delayMs : policy.delayMs(attempt);
      if (clock.monotonicNow() - startedAt + pause > maxElapsedMs || policy.signal?.aborted) throw error;
      try {
        await sleep(pause, clock, policy.signal);
      } catch {
        throw error;
      }
    }
  }
}

/** Pauses of `initialMs`, doubling on every retry, capped at `maxMs`. */
export function exponentialBackoff(initialMs: number, maxMs: number): (retry: number) => number {
  return (retryNumber) => Math.min(maxMs, initialMs * 2 ** Math.max(0, retryNumber - 1));
}

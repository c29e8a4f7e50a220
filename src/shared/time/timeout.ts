import type { Clock } from './clock';

/** The time given to an operation by {@link within} ran out. */
export class TimeoutError extends Error {
  readonly code = 'timeout';
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Settles as `work` does, or rejects with `onTimeout()` (default a {@link TimeoutError}) once
 * `timeoutMs` have passed on `clock`. The timer is cleared either way, so nothing stays scheduled.
 * `work` itself is not cancelled: a caller that must clean up after a late answer does so on `work`.
 *
 * @example
 * const answered = await within(pool.query('SELECT 1'), 1000, clock).then(() => true, () => false);
 */
export function within<T>(work: Promise<T>, timeoutMs: number, clock: Clock, onTimeout: () => unknown = () => new TimeoutError(timeoutMs)): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimer(() => reject(onTimeout()), timeoutMs);
    work.then(
      (value) => {
        clock.clearTimer(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimer(timer);
        reject(error);
      },
    );
  });
}

/**
 * Resolves after `ms` on `clock`; rejects with the signal's reason (an `AbortError` when it has none)
 * as soon as `signal` aborts, clearing the timer.
 */
export function sleep(ms: number, clock: Clock, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clock.clearTimer(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error('aborted'), { name: 'AbortError' });
}

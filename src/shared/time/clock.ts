import { performance } from 'node:perf_hooks';

/**
 * The time source every component takes, so tests can drive time.
 * Deadlines use `monotonicNow()`; records use `wallNow()`.
 */
export interface Clock {
  /** Monotonic milliseconds (`performance.now()` base); deadlines are expressed on this scale. */
  monotonicNow(): number;
  /** Wall-clock milliseconds since the epoch; used only in records. */
  wallNow(): number;
  /** Schedules `fn` after `ms` milliseconds; the handle goes back to `clearTimer`. */
  setTimer(fn: () => void, ms: number): unknown;
  /** Cancels a timer returned by `setTimer`. */
  clearTimer(handle: unknown): void;
}

/** Node fires a `setTimeout` longer than this after 1 ms, so every delay is clamped to it. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** The default clock: `performance.now()`, `Date.now()` and an `unref()`ed `setTimeout`. */
export const systemClock: Clock = Object.freeze({
  monotonicNow: () => performance.now(),
  wallNow: () => Date.now(),
  setTimer(fn: () => void, ms: number): unknown {
    const handle = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_DELAY_MS));
    handle.unref();
    return handle;
  },
  clearTimer(handle: unknown): void {
    clearTimeout(handle as NodeJS.Timeout);
  },
});

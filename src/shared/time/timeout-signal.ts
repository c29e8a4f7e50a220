import type { Clock } from './clock';

/** A signal bound to a parent signal and a timer, from {@link timeoutSignal}. */
export interface TimeoutSignal {
  /** Aborts with the parent's reason when the parent aborts, or with the timeout reason when time runs out. */
  readonly signal: AbortSignal;
  /** True once the timer (and not the parent) aborted `signal`. */
  readonly timedOut: boolean;
  /** Clears the timer and detaches from the parent; `signal` keeps whatever state it has. Idempotent. */
  dispose(): void;
}

/**
 * A signal that aborts when `parent` does or once `timeoutMs` have passed on `clock`, whichever comes
 * first; `timeoutMs` `undefined` means no timer. Unlike `AbortSignal.any` plus a timer, `dispose()`
 * removes the listener from the parent at once, so a long-lived parent (a job's signal over
 * thousands of cases) never accumulates dependants.
 *
 * @example
 * const bound = timeoutSignal(jobSignal, 5000, clock, 'case_timeout');
 * try { await work(bound.signal); } finally { bound.dispose(); }
 * if (bound.timedOut) report('case_timeout');
 */
export function timeoutSignal(parent: AbortSignal | undefined, timeoutMs: number | undefined, clock: Clock, timeoutReason: unknown): TimeoutSignal {
  const controller = new AbortController();
  let timedOut = false;
  let timer: unknown;
  const dispose = (): void => {
    if (timer !== undefined) clock.clearTimer(timer);
    timer = undefined;
    parent?.removeEventListener('abort', onParentAbort);
  };
  const onParentAbort = (): void => {
    dispose();
    controller.abort(parent?.reason);
  };
  if (parent?.aborted) {
    controller.abort(parent.reason);
  } else {
    parent?.addEventListener('abort', onParentAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = clock.setTimer(() => {
        timer = undefined;
        timedOut = true;
        dispose();
        controller.abort(timeoutReason);
      }, timeoutMs);
    }
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose,
  };
}

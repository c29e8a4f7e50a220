/** What an unexpected error of the router's own bookkeeping is reported as (spec 07 §5 fail-stop). */
export const BOOKKEEPING_FAILED = 'router_bookkeeping_failed';

/**
 * How a router's transitions run. Each is synchronous; its side effects (settling a caller, aborting
 * a signal, calling an adapter) are collected and run once the state is consistent. An effect that
 * calls back into the router starts a transition whose effects join the running flush, so no caller
 * sees a half-made decision. Anything unexpected that escapes — a transition started by a timer, a
 * signal or a settled promise, or an effect — is reported once through `onChildDown`, in a later
 * microtask, so the bundle's reaction never runs inside a broken transition.
 */
export class RouterTransitions {
  private readonly effects: Array<() => void> = [];
  private flushing = false;
  private reported = false;

  constructor(private readonly onChildDown: ((reason: string) => void) | undefined) {}

  /** Collects an effect of the running transition. */
  push(effect: () => void): void {
    this.effects.push(effect);
  }

  /** Runs a transition started by a caller (its exception propagates), then the collected effects. */
  operate<T>(transition: () => T): T {
    try {
      return transition();
    } finally {
      this.flush();
    }
  }

  /** Runs a transition nobody waits on: whatever escapes it is a bookkeeping failure. */
  guard(transition: () => void): void {
    try {
      this.operate(transition);
    } catch {
      this.fail();
    }
  }

  /** Reports a bookkeeping failure (once per router). */
  fail(): void {
    if (this.reported) return;
    this.reported = true;
    const notify = this.onChildDown;
    if (notify === undefined) return;
    queueMicrotask(() => {
      try {
        notify.call(undefined, BOOKKEEPING_FAILED);
      } catch {
        // the bundle's reaction is its own business
      }
    });
  }

  /** Runs the collected effects in order, including ones pushed meanwhile; a nested call returns at once. */
  private flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      for (let i = 0; i < this.effects.length; i++) {
        try {
          this.effects[i]();
        } catch {
          this.fail();
        }
      }
    } finally {
      this.effects.length = 0;
      this.flushing = false;
    }
  }
}

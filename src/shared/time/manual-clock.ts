import { MAX_TIMER_DELAY_MS, type Clock } from './clock';

interface ManualTimer {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** The offset between the manual monotonic scale and the wall clock it reports. */
const WALL_EPOCH_MS = 1_700_000_000_000;

/**
 * A controllable {@link Clock} for tests. Time moves only through `advance(ms)`, which fires every
 * timer that falls due in that window in due order (ties in scheduling order), with
 * `monotonicNow()` reading each timer's due time while it runs. Like Node, a delay above
 * 2^31 − 1 ms fires after 1 ms; a negative or non-finite delay counts as 0.
 */
export class ManualClock implements Clock {
  private now: number;
  private seq = 0;
  private readonly timers = new Map<object, ManualTimer>();

  constructor(startMs = 1000) {
    this.now = startMs;
  }

  monotonicNow(): number {
    return this.now;
  }

  wallNow(): number {
    return WALL_EPOCH_MS + this.now;
  }

  setTimer(fn: () => void, ms: number): unknown {
    let delay = Number.isFinite(ms) && ms > 0 ? ms : 0;
    if (delay > MAX_TIMER_DELAY_MS) delay = 1;
    const handle = {};
    this.timers.set(handle, { due: this.now + delay, seq: this.seq++, fn });
    return handle;
  }

  clearTimer(handle: unknown): void {
    if (typeof handle === 'object' && handle !== null) this.timers.delete(handle);
  }

  /** Timers scheduled and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms` (≥ 0), firing due timers (including ones they schedule) in order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError('ManualClock.advance needs a non-negative number');
    const target = this.now + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.timers.delete(next[0]);
      this.now = Math.max(this.now, next[1].due);
      next[1].fn();
    }
    this.now = target;
  }

  private nextDue(limit: number): [object, ManualTimer] | undefined {
    let best: [object, ManualTimer] | undefined;
    for (const entry of this.timers) {
      const t = entry[1];
      if (t.due > limit) continue;
      if (best === undefined || t.due < best[1].due || (t.due === best[1].due && t.seq < best[1].seq)) best = entry;
    }
    return best;
  }
}

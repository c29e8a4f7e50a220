import { MAX_TIMER_DELAY_MS, type Clock } from './clock';

/**
 * One timer for an absolute monotonic deadline. A timer that fires before the deadline (by the
 * clock, or because the delay was clamped to 2^31 − 1 ms) re-arms itself for the remainder.
 */
export class DeadlineTimer {
  private handle: unknown = undefined;
  /** The deadline armed for; `Infinity` when idle. */
  deadline = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly onDeadline: () => void,
  ) {}

  /** Arms for `deadline` (replacing any earlier arming); `Infinity` disarms. */
  arm(deadline: number): void {
    if (deadline === this.deadline) return;
    this.clear();
    this.deadline = deadline;
    if (deadline !== Infinity) this.schedule();
  }

  clear(): void {
    if (this.handle !== undefined) this.clock.clearTimer(this.handle);
    this.handle = undefined;
    this.deadline = Infinity;
  }

  private schedule(): void {
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, this.deadline - this.clock.monotonicNow()));
    this.handle = this.clock.setTimer(this.fire, delay);
  }

  private readonly fire = (): void => {
    this.handle = undefined;
    if (this.clock.monotonicNow() < this.deadline) {
      this.schedule();
      return;
    }
    this.deadline = Infinity;
    this.onDeadline();
  };
}

import type { Clock } from '../../shared/time/clock';

/**
 * When the store's prune pass runs (spec 06 §6): every `intervalMs` on the clock and, while expired
 * work is left, once more at once but in its own turn, so the event loop is never held. A pass that
 * throws is swallowed: it is pure bookkeeping, and the next pass retries.
 */
export class PruneTimer {
  #timer: unknown = undefined;
  #followUp: NodeJS.Immediate | undefined = undefined;
  #stopped = false;

  /** Arms the first interval at once. */
  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly pass: () => void,
  ) {
    this.#arm();
  }

  /** Runs one more pass in the next turn of the event loop (at most one is waiting). */
  followUp(): void {
    if (this.#stopped || this.#followUp !== undefined) return;
    this.#followUp = setImmediate(() => {
      this.#followUp = undefined;
      if (!this.#stopped) this.#safePass();
    });
    this.#followUp.unref();
  }

  /** No pass runs any more. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    if (this.#followUp !== undefined) clearImmediate(this.#followUp);
    this.#followUp = undefined;
  }

  #arm(): void {
    this.#timer = this.clock.setTimer(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      this.#safePass();
      this.#arm();
    }, this.intervalMs);
  }

  #safePass(): void {
    try {
      this.pass();
    } catch {
      // the pass is pure bookkeeping; a failure must not reach the event loop, and the next pass retries
    }
  }
}

import { systemClock, type Clock } from '../shared/time/clock';

/** First pause before an in-process restart (conventions, "Health and shutdown"). */
export const RESTART_FIRST_DELAY_MS = 1000;
/** Longest pause between restart attempts. */
export const RESTART_MAX_DELAY_MS = 30_000;

/** What a {@link RestartSupervisor} restarts, and on which clock. */
export interface RestartSupervisorOptions {
  /** Starts a new generation of the component; a rejection is retried after a doubled pause. */
  readonly restart: () => Promise<void>;
  /** @default systemClock */
  readonly clock?: Clock;
  /** @default 1000 */
  readonly firstDelayMs?: number;
  /** @default 30000 */
  readonly maxDelayMs?: number;
}

/**
 * Restarts a component that stopped on a fault, in-process (conventions, "Health and shutdown"):
 * `stopped()` schedules `restart()` after 1 s; a failed attempt doubles the pause up to 30 s; a
 * successful one resets it. One attempt at a time, timers on the injectable clock; `close()` (at
 * shutdown) cancels what is scheduled and refuses every later `stopped()`.
 *
 * @example
 * const supervisor = new RestartSupervisor({ restart: () => service.restart(), clock });
 * const service = new EvalService({ store, onFaultStop: () => supervisor.stopped() });
 */
export class RestartSupervisor {
  readonly #restart: () => Promise<void>;
  readonly #clock: Clock;
  readonly #firstDelayMs: number;
  readonly #maxDelayMs: number;
  #delayMs: number;
  #timer: unknown = undefined;
  #attempting = false;
  #stoppedDuringAttempt = false;
  #closed = false;
  #restarts = 0;

  constructor(options: RestartSupervisorOptions) {
    this.#restart = options.restart;
    this.#clock = options.clock ?? systemClock;
    this.#firstDelayMs = options.firstDelayMs ?? RESTART_FIRST_DELAY_MS;
    this.#maxDelayMs = options.maxDelayMs ?? RESTART_MAX_DELAY_MS;
    this.#delayMs = this.#firstDelayMs;
  }

  /** Successful restarts so far. */
  get restarts(): number {
    return this.#restarts;
  }

  /** True while a restart is scheduled or running. */
  get pending(): boolean {
    return this.#timer !== undefined || this.#attempting;
  }

  /** The component stopped on a fault: a restart is scheduled after the current pause (once). */
  stopped(): void {
    if (this.#attempting) this.#stoppedDuringAttempt = true;
    if (this.#closed || this.pending) return;
    this.#timer = this.#clock.setTimer(() => void this.#attempt(), this.#delayMs);
  }

  /** No restart from now on (application shutdown). */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  async #attempt(): Promise<void> {
    this.#timer = undefined;
    if (this.#closed) return;
    this.#attempting = true;
    this.#stoppedDuringAttempt = false;
    let ok = false;
    try {
      await this.#restart();
      ok = true;
    } catch {
      // the component reports its own stop reason; the next attempt waits longer
    } finally {
      this.#attempting = false;
    }
    // a generation that stopped again while its start was still settling counts as a failed attempt
    if (ok && !this.#stoppedDuringAttempt) {
      this.#restarts += 1;
      this.#delayMs = this.#firstDelayMs;
      return;
    }
    this.#delayMs = Math.min(this.#delayMs * 2, this.#maxDelayMs);
    this.stopped();
  }
}

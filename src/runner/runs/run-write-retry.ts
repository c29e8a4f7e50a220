import type { Clock } from '../../shared/time/clock';
import { sleep } from '../../shared/time/timeout';

/** First pause between the attempts of a run's terminal write; it doubles up to {@link MAX_PAUSE_MS}. */
export const FIRST_PAUSE_MS = 250;
export const MAX_PAUSE_MS = 5000;

/** Runs a write until it lands (see {@link untilWritten}). */
export type Persist = <T>(write: () => Promise<T>) => Promise<T>;

/**
 * Repeats `write` until it settles without throwing: a run's terminal write (its end, its pause) must
 * land across a database outage, or the run stays `running` with nothing executing it. Waits
 * 250 ms doubling to 5 s on `clock` between attempts. Once `stop` aborts (the registry's shutdown
 * is over) the last failure is thrown; the store's reconciler, or the instance that takes the run
 * over, ends the run then. The writes are compare-and-set, so repeating one that landed unseen
 * (its answer lost with the connection) writes nothing twice.
 */
export async function untilWritten<T>(write: () => Promise<T>, clock: Clock, stop: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (stop.aborted) throw error;
      const pause = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(attempt, 16));
      await sleep(pause, clock, stop).catch(() => {
        throw error;
      });
    }
  }
}

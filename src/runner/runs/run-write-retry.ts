import type { Clock } from '../../shared/time/clock';
import { exponentialBackoff, retry } from '../../shared/time/retry';

/** Pauses between the attempts of a run's terminal write: 250 ms doubling to 5 s. */
const PAUSES = exponentialBackoff(250, 5000);

/** Runs a write until it lands (see {@link untilWritten}). */
export type Persist = <T>(write: () => Promise<T>) => Promise<T>;

/**
 * Repeats `write` until it settles without throwing: a run's terminal write (its end, its pause) must
 * land across a database outage, or the run stays `running` with nothing executing it. Pauses 250 ms
 * doubling to 5 s on `clock`. Once `stop` aborts (the registry's shutdown is over) the last failure is
 * thrown; the store's reconciler, or the instance that takes the run over, ends the run then. The
 * writes are compare-and-set, so repeating one that landed unseen (its answer lost with the
 * connection) writes nothing twice.
 */
export function untilWritten<T>(write: () => Promise<T>, clock: Clock, stop: AbortSignal): Promise<T> {
  return retry(write, { attempts: Infinity, delayMs: PAUSES, retryable: () => true, signal: stop }, clock);
}

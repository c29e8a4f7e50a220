import type { ScopeWorker } from './scope-worker';

/**
 * A hold on one worker incarnation (spec 07 §4): while it is held the worker is never evicted. It
 * ends exactly once — on `release()`, on abort of its borrower's signal, or when the router stops.
 */
export interface ScopeLease {
  /** The incarnation of the worker it was taken on; ending it never touches another (a replacement). */
  readonly incarnation: number;
  /** True until the lease ended, by whichever path came first. */
  readonly held: boolean;
  /** Ends the lease: `true` the first time, `false` once it has ended on any path. */
  release(): boolean;
}

/** The router's record of a lease: counted in `worker.leases` while held. */
export class LeaseRecord<S> {
  held = true;
  /** Listens to the borrower's signal while held. */
  listener: (() => void) | undefined = undefined;

  constructor(
    readonly worker: ScopeWorker<S>,
    readonly borrower: AbortSignal | undefined,
  ) {}

  /** Stops listening to the borrower. */
  detach(): void {
    if (this.listener !== undefined) this.borrower?.removeEventListener('abort', this.listener);
    this.listener = undefined;
  }
}

/** Counts a new lease on `worker`; an abort of `borrower` calls `onBorrowerAbort` (an already aborted one ends it at once). */
export function grantLease<S>(worker: ScopeWorker<S>, borrower: AbortSignal | undefined, onBorrowerAbort: (lease: LeaseRecord<S>) => void): LeaseRecord<S> {
  const lease = new LeaseRecord(worker, borrower);
  worker.leases.add(lease);
  if (borrower?.aborted) {
    endLease(lease);
  } else if (borrower !== undefined) {
    lease.listener = () => onBorrowerAbort(lease);
    borrower.addEventListener('abort', lease.listener, { once: true });
  }
  return lease;
}

/** The one path by which a lease stops counting: `true` the first time, `false` once it has ended. */
export function endLease<S>(lease: LeaseRecord<S>): boolean {
  if (!lease.held) return false;
  lease.held = false;
  lease.detach();
  lease.worker.leases.delete(lease);
  return true;
}

/** The frozen face of a lease handed to a borrower; `release` goes back through the router. */
export function leaseFacade<S>(record: LeaseRecord<S>, release: (record: LeaseRecord<S>) => boolean): ScopeLease {
  const incarnation = record.worker.incarnation;
  return Object.freeze({
    incarnation,
    get held(): boolean {
      return record.held;
    },
    release: (): boolean => release(record),
  });
}

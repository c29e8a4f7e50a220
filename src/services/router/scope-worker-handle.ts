import type { ServiceCallOptions } from '../services.types';
import type { ScopeLease } from './scope-lease';
import type { ScopeOperation, ScopeWorker } from './scope-worker';

/**
 * A worker as one borrower sees it (from `router.resolve`): bound to the borrower's scope and lease.
 * `run` queues an operation like `router.run` does, without routing again; it needs the lease held
 * (else `scope_route_caller_unavailable`) and rejects with the stale error once the router stopped.
 */
export interface ScopeWorkerHandle<S> {
  /** The worker's incarnation, the same as its lease's. */
  readonly incarnation: number;
  /** Leases currently held on this worker incarnation (all borrowers). */
  readonly leaseCount: number;
  /** `options.signal` defaults to the lease's borrower signal, `options.timeoutMs` to the component's `callTimeoutMs`. */
  run<T>(operation: ScopeOperation<S, T>, options?: ServiceCallOptions): Promise<T>;
}

/** What `router.resolve` hands over. */
export interface ResolvedScope<S> {
  readonly worker: ScopeWorkerHandle<S>;
  readonly lease: ScopeLease;
}

/** The frozen handle; `run` goes back through the router. */
export function workerHandle<S>(worker: ScopeWorker<S>, run: (operation: ScopeOperation<S, unknown>, options?: ServiceCallOptions) => Promise<unknown>): ScopeWorkerHandle<S> {
  return Object.freeze({
    incarnation: worker.incarnation,
    get leaseCount(): number {
      return worker.leases.size;
    },
    run: <T>(operation: ScopeOperation<S, T>, options?: ServiceCallOptions): Promise<T> => run(operation, options) as Promise<T>,
  });
}

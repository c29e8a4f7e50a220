import { LinkedList, type ListNode } from '../../shared/collections/linked-list';
import type { AdapterCallOptions } from '../services.types';
import type { RouterCall } from './router-call';
import type { LeaseRecord } from './scope-lease';

/** What a worker runs: an adapter operation on the caller's scope, with the call's remaining time and signal. */
export type ScopeOperation<S, T> = (scope: S, call: AdapterCallOptions) => Promise<T>;

/** `starting`: its creation is in progress; `live`: installed; `retired`: evicted, dropped or stopped (never revived). */
export type WorkerState = 'starting' | 'live' | 'retired';

/** One queued operation of a worker. */
export class WorkerJob<S> implements ListNode<WorkerJob<S>> {
  prev: WorkerJob<S> | null = null;
  next: WorkerJob<S> | null = null;

  constructor(
    readonly worker: ScopeWorker<S>,
    readonly call: RouterCall<S>,
    readonly scope: S,
    readonly operation: ScopeOperation<S, unknown>,
  ) {}
}

/**
 * The worker of one scope key (or of every scope under `shared`): its leases, its operations in
 * arrival order (one running at a time) and its place in the least-recent-access list.
 */
export class ScopeWorker<S> implements ListNode<ScopeWorker<S>> {
  prev: ScopeWorker<S> | null = null;
  next: ScopeWorker<S> | null = null;
  state: WorkerState = 'starting';
  readonly leases = new Set<LeaseRecord<S>>();
  readonly jobs = new LinkedList<WorkerJob<S>>();
  running: WorkerJob<S> | null = null;

  constructor(
    readonly key: string,
    /** Unique per router and never reused: a replacement worker for the same key has another. */
    readonly incarnation: number,
    /** Monotonic ms of the last lease taken or ended, or operation settled. */
    public lastAccess: number,
  ) {}

  /** No lease and no queued or running operation: reclaimable once idle long enough. */
  get unused(): boolean {
    return this.leases.size === 0 && this.jobs.size === 0 && this.running === null;
  }
}

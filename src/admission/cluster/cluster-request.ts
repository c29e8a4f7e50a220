import type { OverflowMode } from '../admission-config';
import type { Waiter } from '../admission-queue';
import type { IssuedPermit } from '../permit';
import type { HeapItem } from '../../shared/collections/indexed-min-heap';

/**
 * Where a request of this instance is: `pending` while its submit decision runs, then `queued`,
 * `active` (holding a permit) or `done` (terminal).
 */
export type ClusterRequestState = 'pending' | 'queued' | 'active' | 'done';

/** A request submitted on this instance: what this instance knows and watches of it. */
export class ClusterRequest implements HeapItem {
  heapIndex = -1;
  state: ClusterRequestState = 'pending';
  /** Cluster-wide enqueue order, once queued. */
  seq = 0;
  permit: IssuedPermit | undefined = undefined;
  waiters: Waiter[] | null = null;
  ownerListener: (() => void) | undefined = undefined;
  signalListener: (() => void) | undefined = undefined;
  /** A grant was seen while the submit decision was still being applied. */
  grantedEarly = false;

  constructor(
    /** The controller that owns the request: a permit is only ever released by its issuer. */
    readonly issuer: object,
    readonly ref: string,
    /** Chosen before the request is stored, so whichever instance grants it writes the permit row. */
    readonly permitId: string,
    readonly agentId: string,
    readonly overflow: OverflowMode,
    /** Absolute monotonic ms on this instance's clock; `Infinity` never expires. */
    readonly deadline: number,
    readonly submittedAt: number,
    readonly owner: AbortSignal | undefined,
    readonly signal: AbortSignal | undefined,
  ) {}
}

/** Deadline order of the local expiry heap: (deadline, submit time). */
export const earlierDeadline = (a: ClusterRequest, b: ClusterRequest): boolean =>
  a.deadline < b.deadline || (a.deadline === b.deadline && (a.submittedAt < b.submittedAt || (a.submittedAt === b.submittedAt && a.ref < b.ref)));

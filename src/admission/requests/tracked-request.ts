import { handled, rejectedWith } from '../../shared/async/handled-promise';
import type { HeapItem } from '../../shared/collections/indexed-min-heap';
import type { Clock } from '../../shared/time/clock';
import { DeadlineTimer } from '../../shared/time/deadline-timer';
import type { SubmitResult } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import type { IssuedPermit, Permit } from '../permit';
import type { EffectQueue } from './admission-effects';

/**
 * Where a request is: `pending` while the cluster decides its submit (never in the local controller),
 * then `queued`, `active` (holding a permit) or `done` (terminal).
 */
export type RequestState = 'pending' | 'queued' | 'active' | 'done';

/** One waiter of a queued request (an `acquire` or an `await`). */
export interface Waiter {
  resolve(permit: Permit): void;
  reject(reason: unknown): void;
  /** The caller's promise, marked handled just before a rejection so a dropped promise is never reported. */
  promise?: Promise<Permit>;
}

/**
 * A request a controller tracks from its submit to its end: its state, its permit once granted, the
 * callers waiting for it, and its listeners on the owner's and the requester's signals (spec 01 §10:
 * at most one per distinct signal while queued, only the owner's once active).
 */
export class TrackedRequest implements HeapItem {
  /** Position in the controller's deadline index; `-1` outside it. */
  heapIndex = -1;
  state: RequestState = 'queued';
  /** Enqueue order among this controller's queued requests (the order a drain fails them in). */
  seq = 0;
  permit: IssuedPermit | undefined = undefined;
  /** Who waits for the outcome; `null` once it settled (or nobody waited). */
  waiters: Waiter[] | null = null;
  ownerListener: (() => void) | undefined = undefined;
  signalListener: (() => void) | undefined = undefined;
  /** Spec 09 §1: the tenant (none: no tenant scope), the estimated cost and the class rank (`CLASS_RANK`). */
  tenant: string | undefined = undefined;
  cost = 1;
  rank = 1;

  constructor(
    /** The controller that owns the request: a permit is only ever released by its issuer. */
    readonly issuer: object,
    readonly ref: string,
    readonly agentId: string,
    /** Absolute monotonic ms on the controller's clock; `Infinity` never expires. */
    readonly deadline: number,
    readonly submittedAt: number,
    readonly owner: AbortSignal | undefined,
    readonly signal: AbortSignal | undefined,
  ) {}

  /** What `submit` answers once the request is granted (with its permit) or queued (with its deadline). */
  submitResult(): SubmitResult {
    if (this.state === 'active') return Object.freeze({ requestRef: this.ref, status: 'granted' as const, permit: this.permit as Permit });
    return Object.freeze({ requestRef: this.ref, status: 'queued' as const, deadline: this.deadline === Infinity ? ('infinity' as const) : this.deadline });
  }

  /** A promise of the outcome, settled with the other waiters (`acquire`). */
  wait(): Promise<Permit> {
    let waiter!: Waiter;
    const promise = new Promise<Permit>((resolve, reject) => (waiter = { resolve, reject }));
    waiter.promise = promise;
    (this.waiters ??= []).push(waiter);
    return promise;
  }

  /**
   * `await(ref, timeoutMs)` (spec 01 §5.5): the permit of an active request; else the outcome, or
   * `await_timeout` once `timeoutMs` passes on `clock` (the waiter goes, the request stays as it is).
   */
  waitAtMost(clock: Clock, timeoutMs: number | 'infinity'): Promise<Permit> {
    if (this.state === 'active') return Promise.resolve(this.permit as Permit);
    if (timeoutMs === 0) return rejectedWith<Permit>(new AdmissionError('await_timeout'));
    return handled(
      new Promise<Permit>((resolve, reject) => {
        if (timeoutMs === 'infinity' || timeoutMs === Infinity) {
          (this.waiters ??= []).push({ resolve, reject });
          return;
        }
        const waiter: Waiter = {
          resolve: (permit) => (timer.clear(), resolve(permit)),
          reject: (reason) => (timer.clear(), reject(reason)),
        };
        const timer = new DeadlineTimer(clock, () => {
          if (this.waiters) this.waiters = this.waiters.filter((other) => other !== waiter);
          reject(new AdmissionError('await_timeout'));
        });
        (this.waiters ??= []).push(waiter);
        timer.arm(clock.monotonicNow() + timeoutMs);
      }),
    );
  }

  /** Settles every waiter with the permit, as an effect of the operation. */
  resolveWaiters(permit: Permit, effects: EffectQueue): void {
    const waiters = this.waiters;
    this.waiters = null;
    if (waiters) effects.push(() => waiters.forEach((waiter) => waiter.resolve(permit)));
  }

  /** Fails every waiter with `reason`, as an effect; their promises count as handled from now on. */
  rejectWaiters(reason: unknown, effects: EffectQueue): void {
    const waiters = this.waiters;
    this.waiters = null;
    if (!waiters) return;
    for (const waiter of waiters) if (waiter.promise) handled(waiter.promise);
    effects.push(() => waiters.forEach((waiter) => waiter.reject(reason)));
  }

  /** Calls `onAbort` when the owner aborts, and when the requester's signal (a distinct one) aborts. */
  listen(onAbort: () => void): void {
    if (this.owner) this.listenToOwner(onAbort);
    if (this.signal && this.signal !== this.owner) {
      this.signalListener = onAbort;
      this.signal.addEventListener('abort', onAbort, { once: true });
    }
  }

  listenToOwner(onAbort: () => void): void {
    this.ownerListener = onAbort;
    (this.owner as AbortSignal).addEventListener('abort', onAbort, { once: true });
  }

  /** Granted: the requester's abort no longer matters, the owner's still does (spec 01 §5.2). */
  stopListeningToSignal(): void {
    if (!this.signalListener) return;
    (this.signal as AbortSignal).removeEventListener('abort', this.signalListener);
    this.signalListener = undefined;
  }

  /** Ended: removes every listener. */
  stopListening(): void {
    if (this.ownerListener) (this.owner as AbortSignal).removeEventListener('abort', this.ownerListener);
    this.ownerListener = undefined;
    this.stopListeningToSignal();
  }
}

import type { Clock } from '../../shared/time/clock';
import { DeadlineTimer } from '../../shared/time/deadline-timer';
import { handled } from '../../shared/async/handled-promise';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { ScopeCreation } from './scope-creation';
import type { LeaseRecord } from './scope-lease';
import type { ScopeWorker, WorkerJob } from './scope-worker';

/** How a call ends: with a value, or with an error. */
export type CallOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** What a routed call does with the worker once it is handed over (run: queue the operation; resolve: hand out a lease). */
export type Handoff<S> = (call: RouterCall<S>, worker: ScopeWorker<S>, scope: S) => void;

/** The routing facts of a call that may take the cold path. */
export interface CallRoute<S> {
  readonly key: string;
  readonly scope: S;
  readonly handoff: Handoff<S>;
}

/** `timeout` when the deadline has passed, `scope_route_caller_unavailable` when the caller's signal aborted, else `null`. */
export function stageRefusal(deadline: number, signal: AbortSignal | undefined, now: number): RuntimeServiceError | null {
  if (now >= deadline) return new RuntimeServiceError('timeout');
  if (signal?.aborted) return new RuntimeServiceError('scope_route_caller_unavailable');
  return null;
}

/**
 * The wait of one caller, from entry until its outcome: one absolute deadline (a timer), the
 * caller's signal, and what the call holds meanwhile — a cold-route permit, a place among a
 * creation's waiters, a queued operation, a lease. The router frees each of them exactly once, when
 * the wait ends on any path. `signal` is what adapter operations receive: it aborts with the error
 * that ended the wait early.
 */
export class RouterCall<S> {
  /** Never reported as unhandled when a caller drops it; an awaiting caller still sees the rejection. */
  readonly promise: Promise<unknown>;
  ended = false;
  /** Holds one of the router's `maxRouterQueue` cold-route permits. */
  permit = false;
  creation: ScopeCreation<S> | null = null;
  job: WorkerJob<S> | null = null;
  lease: LeaseRecord<S> | null = null;

  private readonly controller = new AbortController();
  private readonly timer: DeadlineTimer;
  private readonly listener: (() => void) | undefined;
  private resolvePromise!: (value: unknown) => void;
  private rejectPromise!: (error: unknown) => void;

  /** `onInterrupt` is called (from a timer or the caller's signal) with the error that ends the wait. */
  constructor(
    clock: Clock,
    readonly deadline: number,
    readonly callerSignal: AbortSignal | undefined,
    readonly route: CallRoute<S> | null,
    onInterrupt: (call: RouterCall<S>, error: RuntimeServiceError) => void,
  ) {
    this.promise = handled(
      new Promise<unknown>((resolve, reject) => {
        this.resolvePromise = resolve;
        this.rejectPromise = reject;
      }),
    );
    this.timer = new DeadlineTimer(clock, () => onInterrupt(this, new RuntimeServiceError('timeout')));
    this.timer.arm(deadline);
    if (callerSignal !== undefined && !callerSignal.aborted) {
      this.listener = () => onInterrupt(this, new RuntimeServiceError('scope_route_caller_unavailable'));
      callerSignal.addEventListener('abort', this.listener, { once: true });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** See {@link stageRefusal}. */
  refusal(now: number): RuntimeServiceError | null {
    return stageRefusal(this.deadline, this.callerSignal, now);
  }

  /** Whole milliseconds left, at least 1; call only when {@link refusal} found time left. */
  remainingMs(now: number): number {
    return Math.max(1, Math.floor(this.deadline - now));
  }

  /** Marks the wait ended and stops its timer and listener; the holds are the router's to free. */
  close(): void {
    this.ended = true;
    this.timer.clear();
    if (this.listener !== undefined) this.callerSignal?.removeEventListener('abort', this.listener);
  }

  /** Delivers the outcome (an effect: aborting `signal` runs adapter listeners). */
  settle(outcome: CallOutcome): void {
    if (outcome.ok) {
      this.resolvePromise(outcome.value);
      return;
    }
    this.rejectPromise(outcome.error);
    this.controller.abort(outcome.error);
  }
}

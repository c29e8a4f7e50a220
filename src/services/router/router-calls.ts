import type { Clock } from '../../shared/time/clock';
import type { RuntimeServiceError } from '../runtime-service.errors';
import { RouterCall, type CallOutcome, type CallRoute } from './router-call';
import type { RouterTransitions } from './router-transitions';
import { endLease, grantLease, type LeaseRecord } from './scope-lease';
import type { ScopeWorker } from './scope-worker';

/** What the calls of a router need from it. */
export interface RouterCallsDeps<S> {
  readonly clock: Clock;
  readonly transitions: RouterTransitions;
  /** Marks a worker used now (its idleness restarts). */
  touch(worker: ScopeWorker<S>): void;
  /** Gives back what an ending call holds in the cold path (its place among a creation's waiters) and in a worker's queue. */
  leave(call: RouterCall<S>): void;
}

/**
 * What a router has handed out (spec 07 §4): the calls whose wait has not ended, the cold-route
 * permits they hold, and the leases on workers. Each call ends exactly once, through {@link finish},
 * which frees everything it holds; each lease ends exactly once, through {@link endLease}.
 */
export class RouterCalls<S> {
  /** Every call whose wait has not ended. */
  private readonly open = new Set<RouterCall<S>>();
  private coldInFlight = 0;

  constructor(private readonly deps: RouterCallsDeps<S>) {}

  /** Cold routes holding one of the router's `maxRouterQueue` permits. */
  get coldRoutesInFlight(): number {
    return this.coldInFlight;
  }

  /** A new call waiting until `deadline`, ended early by its caller's `signal`. */
  openCall(deadline: number, signal: AbortSignal | undefined, route: CallRoute<S> | null): RouterCall<S> {
    const call = new RouterCall<S>(this.deps.clock, deadline, signal, route, this.interrupt);
    this.open.add(call);
    return call;
  }

  /** The call takes a cold-route permit (the router checked one is free). */
  takePermit(call: RouterCall<S>): void {
    call.permit = true;
    this.coldInFlight++;
  }

  /** Gives the call's cold-route permit back, once. */
  returnPermit(call: RouterCall<S>): void {
    if (!call.permit) return;
    call.permit = false;
    this.coldInFlight--;
  }

  /** The one exit of every call: frees what it holds (permit, creation place, queued job, lease) exactly once. */
  finish(call: RouterCall<S>, outcome: CallOutcome): void {
    if (call.ended) return;
    call.close();
    this.open.delete(call);
    this.returnPermit(call);
    this.deps.leave(call);
    const lease = call.lease;
    if (lease !== null) {
      call.lease = null;
      this.endLease(lease);
    }
    this.deps.transitions.push(() => call.settle(outcome));
  }

  /** Ends every call whose wait has not ended with `error`. */
  failAll(error: unknown): void {
    for (const call of [...this.open]) this.finish(call, { ok: false, error });
  }

  /** A lease on `worker`, ended by an abort of `borrower` when one is given. */
  takeLease(worker: ScopeWorker<S>, borrower: AbortSignal | undefined): LeaseRecord<S> {
    return grantLease(worker, borrower, (lease) => this.deps.transitions.guard(() => this.endLease(lease)));
  }

  /** Ends a lease (the worker's idleness restarts): `true` the first time. */
  endLease(lease: LeaseRecord<S>): boolean {
    if (!endLease(lease)) return false;
    this.deps.touch(lease.worker);
    return true;
  }

  /** `release()` of a borrower's lease: a bookkeeping error fails the router instead of escaping to the borrower. */
  readonly releaseLease = (lease: LeaseRecord<S>): boolean => {
    try {
      return this.deps.transitions.operate(() => this.endLease(lease));
    } catch {
      this.deps.transitions.fail();
      return false;
    }
  };

  private readonly interrupt = (call: RouterCall<S>, error: RuntimeServiceError): void => {
    this.deps.transitions.guard(() => this.finish(call, { ok: false, error }));
  };
}

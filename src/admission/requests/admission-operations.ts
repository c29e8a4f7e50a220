import { systemClock } from '../../shared/time/clock';
import { handled, rejectedWith } from '../../shared/async/handled-promise';
import { isDrainTimeoutMs, isTimeoutMs } from '../admission-config';
import { deadlineAfterMs, type AdmissionRequestOptions } from '../admission-request';
import type { AdmissionService } from '../admission-service';
import type { AdmissionStatus, SubmitResult } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import { issuerRecordOf, permitIdOf, type Permit } from '../permit';
import { runUnderPermit } from './admission-waiters';
import { AdmissionLifecycle } from './admission-lifecycle';
import type { TrackedRequest } from './tracked-request';

/**
 * The operations of spec 01 §5.5–§5.10 both admission controllers share, written once over the
 * {@link AdmissionLifecycle}: `await`, `cancel`, `release`, `run`, `status`, `beginDrain`, `drain` and
 * `deadlineAfter`. A controller adds `submit` and `acquire`, and decides its grants.
 */
export abstract class AdmissionOperations<R extends TrackedRequest, S extends AdmissionStatus> extends AdmissionLifecycle<R, S> implements AdmissionService {
  /** `performance.now() + ms` on the system clock, or `'infinity'`. */
  static deadlineAfter(ms: number | 'infinity'): number | 'infinity' {
    return deadlineAfterMs(ms, systemClock.monotonicNow());
  }

  /** `monotonicNow() + ms` on this controller's clock, or `'infinity'`. */
  deadlineAfter(ms: number | 'infinity'): number | 'infinity' {
    return deadlineAfterMs(ms, this.now());
  }

  abstract submit(agentId: string, opts?: AdmissionRequestOptions): SubmitResult | Promise<SubmitResult>;

  abstract acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit>;

  /**
   * Waits for the outcome of one of this controller's requests without changing it. `timeoutMs` passing
   * first rejects with `await_timeout` and leaves the request queued; a recently failed request rejects
   * with its failure, an unknown or released ref with `not_found`.
   */
  await(requestRef: string, timeoutMs: number | 'infinity' = 'infinity'): Promise<Permit> {
    if (typeof requestRef !== 'string' || !isTimeoutMs(timeoutMs)) return rejectedWith(new AdmissionError('invalid_await'));
    return this.operate(() => {
      this.purge(this.now());
      const entry = this.requests.get(requestRef);
      return entry ? entry.waitAtMost(this.clock, timeoutMs) : this.recentFailures.answer(requestRef);
    });
  }

  /** Cancels one of this controller's queued or active requests; `true` at most once per request. */
  cancel(requestRef: string): boolean {
    if (typeof requestRef !== 'string') throw new AdmissionError('invalid_request_ref');
    return this.operate(() => {
      const now = this.now();
      this.purge(now);
      const entry = this.requests.get(requestRef);
      if (entry?.state === 'queued') {
        this.removeQueued(entry, new AdmissionError('cancelled'), 'cancelled', now);
        this.dispatch(now);
        return true;
      }
      return entry !== undefined && this.revoke(entry, 'cancelled');
    });
  }

  /** Returns the capacity of a permit this controller issued; `true` at most once per permit. */
  release(permit: Permit): boolean {
    const entry = issuerRecordOf(permit) as R | undefined;
    if (entry === undefined) {
      permitIdOf(permit);
      return false;
    }
    if (entry.issuer !== this) return false;
    return this.operate(() => this.revoke(entry, 'released'));
  }

  /**
   * Runs `fn` under a permit and releases it on every path. Without `owner`, `opts.signal` also
   * serves as owner, so aborting it stops queued and running work alike.
   */
  run<T>(agentId: string, fn: (permit: Permit, signal: AbortSignal) => T | Promise<T>, opts?: AdmissionRequestOptions): Promise<T> {
    return handled(runUnderPermit(this, agentId, fn, opts));
  }

  /** Aggregate counts and limits: no permit ids, request refs, signals or content. */
  status(): S {
    return this.operate(() => {
      this.purge(this.now());
      return this.snapshot();
    });
  }

  /** Stops admitting (idempotent): fails every queued request of this controller with `deployment_draining`. */
  beginDrain(): S {
    return this.operate(() => {
      this.stopAdmitting();
      return this.snapshot();
    });
  }

  /**
   * `beginDrain()`, then resolves with the status once this controller holds no permit (in cluster mode,
   * and decides no submit). Rejects with `drain_timeout` (revoking nothing) when `timeoutMs` passes first.
   */
  drain(timeoutMs: number = this.config.drainTimeoutMs): Promise<AdmissionStatus> {
    if (!isDrainTimeoutMs(timeoutMs)) return rejectedWith(new AdmissionError('invalid_drain_timeout'));
    const status = this.beginDrain();
    if (this.isDrained()) return Promise.resolve(status);
    return this.drainWaiters.wait(this.clock, timeoutMs, () => this.permitsHeld());
  }
}

import type { AdmissionRequestOptions } from './admission-request';
import type { AdmissionStatus, SubmitResult } from './admission.types';
import type { Permit } from './permit';

/**
 * The two operations the Runner and the adapters use of a controller (`acquire`, then `release` on
 * every path): `AdmissionController` and `ClusterAdmissionController` both are one, and so is any
 * object with these methods.
 */
export interface PermitSource {
  /** Spec 01 §5.4: a permit, after waiting in the queue if the request's overflow allows it. */
  acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit>;
  /** Spec 01 §5.6: revokes a permit this controller issued; `true` at most once. */
  release(permit: Permit): boolean | Promise<boolean>;
}

/**
 * What the Nest integration, the Runner and an application need of an admission controller:
 * `AdmissionController` (process-local, spec 01) and `ClusterAdmissionController` (spec 08 §3)
 * both implement it. Only `submit` differs: a cluster decision is a database transaction, so the
 * cluster controller's `submit` returns a promise.
 */
export interface AdmissionService extends PermitSource {
  /** Spec 01 §5.1: a permit now, a place in the queue, or a typed refusal. */
  submit(agentId: string, opts?: AdmissionRequestOptions): SubmitResult | Promise<SubmitResult>;
  /** Spec 01 §5.4: `submit`, then the queued request's outcome; never throws synchronously. */
  acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit>;
  /** Spec 01 §5.5: waits for a request's outcome without changing it. */
  await(requestRef: string, timeoutMs?: number | 'infinity'): Promise<Permit>;
  /** Spec 01 §5.6: removes a queued request or revokes an active one; `true` at most once. */
  cancel(requestRef: string): boolean;
  /** Spec 01 §5.6: revokes a permit this controller issued; `true` at most once. */
  release(permit: Permit): boolean;
  /** Spec 01 §5.7: acquires, runs `fn`, releases on every path. */
  run<T>(agentId: string, fn: (permit: Permit, signal: AbortSignal) => T | Promise<T>, opts?: AdmissionRequestOptions): Promise<T>;
  /** Spec 01 §5.8: a frozen, content-free record. */
  status(): AdmissionStatus;
  /** Spec 01 §5.9: stops admitting, fails this controller's queue with `deployment_draining`. */
  beginDrain(): AdmissionStatus;
  /** Spec 01 §5.9: `beginDrain`, then waits for this controller's permits to be released. */
  drain(timeoutMs?: number): Promise<AdmissionStatus>;
  /** Spec 01 §5.10: `monotonicNow() + ms` on the controller's clock. */
  deadlineAfter(ms: number | 'infinity'): number | 'infinity';
}

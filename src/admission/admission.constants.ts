import type { OverflowMode } from './admission-config';
import type { Permit } from './permit';

/** Injection token of the module's `AdmissionConfig`. */
export const ADMISSION_OPTIONS = Symbol('ADMISSION_OPTIONS');

/**
 * Injection token of the admission controller in use: an `AdmissionController`, or a
 * `ClusterAdmissionController` when the module has `cluster` options. Both are an `AdmissionService`.
 */
export const ADMISSION_SERVICE = Symbol('ADMISSION_SERVICE');

/** Metadata key written by `@Admission()`. */
export const ADMISSION_ROUTE = 'agent_runtime:admission';

/**
 * The guard's per-request state, keyed by the request object. A side table rather than a property:
 * adding a key to Node's request object changes its shape, which costs more than the lookup.
 */
const requestStates = new WeakMap<object, AdmissionRequestState>();

/** The admitted request's state; `undefined` before admission or on a route without it. */
export function admissionStateOf(request: object): AdmissionRequestState | undefined {
  return requestStates.get(request);
}

/** Attaches the state of an admitted request (the guard's, once per request). */
export function attachAdmissionState(request: object, state: AdmissionRequestState): void {
  requestStates.set(request, state);
}

/** Per-route overrides of the controller defaults. */
export interface AdmissionRouteOptions {
  /** @default the controller's `overflow` */
  overflow?: OverflowMode;
  /** @default the controller's `defaultQueueTimeoutMs` */
  queueTimeoutMs?: number | 'infinity';
}

/** The admitted request's state, shared by the guard, the release interceptor and the decorators. */
export interface AdmissionRequestState {
  readonly permit: Permit;
  /**
   * The route signal (`@AdmissionSignal()`): aborts with `AdmissionError('cancelled')` when the client
   * goes before the response is written, or with the permit's reason when the permit is revoked.
   */
  readonly signal: AbortSignal;
  done: boolean;
  interceptorAttached: boolean;
}

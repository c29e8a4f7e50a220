import type { OverflowMode } from './admission-config';
import type { PriorityClass } from './flow/fair-share';
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

/** A route option's value: fixed, or resolved from each request's context (Nest's `ExecutionContext`). */
export type RouteValue<T, Context> = T | ((context: Context) => T | undefined);

/**
 * Per-route overrides of the controller defaults, and the flow of the route's requests (spec 09 §1).
 * `Context` is what resolvers get: `ExecutionContext` in `@Admission()`.
 */
export interface AdmissionRouteOptions<Context = never> {
  /** @default the controller's `overflow` */
  overflow?: OverflowMode;
  /** @default the controller's `defaultQueueTimeoutMs` */
  queueTimeoutMs?: number | 'infinity';
  /**
   * The tenant the request's work is done for, usually read from the request (a header, the
   * principal). A resolver answering `undefined` means no tenant; one that throws or answers another
   * non-string is a broken route (500 `invalid_admission_options`); an answer that is not a valid id
   * came from the request (400 `invalid_tenant_id`). @default none (no tenant scope)
   */
  tenant?: RouteValue<string, Context>;
  /** Estimated units the work will use (finite, 0..2^31); a bad value is a broken route (500). @default 1 */
  cost?: RouteValue<number, Context>;
  /** The request's class in the queue; a bad value is a broken route (500). @default 'normal' */
  priority?: RouteValue<PriorityClass, Context>;
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

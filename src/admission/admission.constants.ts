import type { ExecutionContext } from '@nestjs/common';
import type { OverflowMode } from './admission-config';
import type { Permit } from './permit';

/** Injection token of the module's `AdmissionConfig`. */
export const ADMISSION_OPTIONS = Symbol('ADMISSION_OPTIONS');

/** Metadata key written by `@Admission()`. */
export const ADMISSION_ROUTE = 'agent_runtime:admission';

/** Where the guard keeps its per-request state (a private symbol on the request). */
export const ADMISSION_REQUEST_STATE = Symbol('agent_runtime:admission_state');

/** The agent of a route: a fixed id, or a resolver reading the request. */
export type AgentIdSource = string | ((context: ExecutionContext) => string);

/** Per-route overrides of the controller defaults. */
export interface AdmissionRouteOptions {
  /** @default the controller's `overflow` */
  overflow?: OverflowMode;
  /** @default the controller's `defaultQueueTimeoutMs` */
  queueTimeoutMs?: number | 'infinity';
}

/** What `@Admission()` stores on a class or handler. */
export interface AdmissionRouteMetadata {
  readonly agent: AgentIdSource;
  readonly options: AdmissionRouteOptions;
}

/** The admitted request's state, shared by the guard, the release interceptor and the decorators. */
export interface AdmissionRequestState {
  readonly permit: Permit;
  /** Aborted after release; the permit's owner. */
  readonly owner: AbortController;
  /** Aborts (reason `AdmissionError('cancelled')`) when the client goes before the response is written. */
  readonly disconnect: AbortSignal;
  done: boolean;
  interceptorAttached: boolean;
}

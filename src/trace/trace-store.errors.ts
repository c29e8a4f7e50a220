import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code a {@link TraceStoreError} carries (spec 06 §10). */
export type TraceStoreErrorCode =
  | 'invalid_trace_store_options'
  | 'invalid_trace_store_request'
  | 'invalid_trace_principal'
  | 'trace_principal_capacity_reached'
  | 'trace_lifecycle_receiver_capacity_reached'
  | 'invalid_trace_event'
  | 'invalid_trace_lifecycle_event'
  | 'trace_event_input_too_large'
  | 'trace_event_too_large'
  | 'trace_content_rejected'
  | 'trace_identity_required'
  | 'invalid_trace_selector'
  | 'invalid_trace_query_options'
  | 'replay_gap'
  | 'cursor_ahead'
  | 'trace_store_unavailable';

/** The error of the trace store: a code and details that never echo a principal, a selector value or event content. */
export class TraceStoreError extends AgentRuntimeError<TraceStoreErrorCode> {
  constructor(code: TraceStoreErrorCode, details?: ErrorDetails) {
    super('TraceStoreError', code, details);
  }

  /** Brand check that runs no user code. */
  static isTraceStoreError(value: unknown): value is TraceStoreError {
    return AgentRuntimeError.isAgentRuntimeError(value, TraceStoreError);
  }
}

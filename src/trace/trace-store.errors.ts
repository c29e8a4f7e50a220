import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const TRACE_STORE_ERROR_CODES = Object.freeze([
  'invalid_trace_store_options',
  'invalid_trace_store_request',
  'invalid_trace_principal',
  'trace_principal_capacity_reached',
  'trace_lifecycle_receiver_capacity_reached',
  'invalid_trace_event',
  'invalid_trace_lifecycle_event',
  'trace_event_input_too_large',
  'trace_event_too_large',
  'trace_content_rejected',
  'trace_identity_required',
  'invalid_trace_selector',
  'invalid_trace_query_options',
  'replay_gap',
  'cursor_ahead',
  'trace_store_unavailable',
] as const);

/** Every code a {@link TraceStoreError} carries (spec 06 §10). */
export type TraceStoreErrorCode = (typeof TRACE_STORE_ERROR_CODES)[number];

/** The gap record of `replay_gap` and `cursor_ahead` (spec 06 §5). */
const GAP = Object.freeze(['after_cursor', 'oldest_available_cursor', 'latest_cursor', 'evicted_through']);
const OUTAGE: HttpErrorRule = { status: 503, retryAfter: true };
const FAULT: HttpErrorRule = { status: 500 };

/** The error of the trace store: a code and details that never echo a principal, a selector value or event content. */
export class TraceStoreError extends AgentRuntimeError<TraceStoreErrorCode> {
  /** Every code of {@link TraceStoreErrorCode}. */
  static readonly codes: readonly TraceStoreErrorCode[] = TRACE_STORE_ERROR_CODES;

  /**
   * The HTTP answer of each code (spec 06 §10). The codes of the constructor and of `append` (the
   * application records its own events) are faults of the application (500 with the code only).
   */
  static readonly httpAnswers: HttpErrorTable<TraceStoreErrorCode> = Object.freeze({
    invalid_trace_store_request: { status: 400 },
    invalid_trace_principal: { status: 401 },
    trace_principal_capacity_reached: OUTAGE,
    trace_lifecycle_receiver_capacity_reached: OUTAGE,
    invalid_trace_selector: { status: 400, details: ['field'] },
    invalid_trace_query_options: { status: 400, details: ['field'] },
    replay_gap: { status: 410, details: GAP },
    cursor_ahead: { status: 409, details: GAP },
    trace_store_unavailable: OUTAGE,
    invalid_trace_store_options: FAULT,
    invalid_trace_event: FAULT,
    invalid_trace_lifecycle_event: FAULT,
    trace_event_input_too_large: FAULT,
    trace_event_too_large: FAULT,
    trace_content_rejected: FAULT,
    trace_identity_required: FAULT,
  });

  constructor(code: TraceStoreErrorCode, details?: ErrorDetails) {
    super('TraceStoreError', code, details);
  }

  /** Brand check that runs no user code. */
  static isTraceStoreError(value: unknown): value is TraceStoreError {
    return AgentRuntimeError.isAgentRuntimeError(value, TraceStoreError);
  }
}

import type { HttpErrorTable } from '../http/http-error-mapper';
import type { TraceStoreErrorCode } from './trace-store.errors';

/** The gap record of `replay_gap` and `cursor_ahead` (spec 06 §5). */
const GAP = Object.freeze(['after_cursor', 'oldest_available_cursor', 'latest_cursor', 'evicted_through']);

/** HTTP answers of the trace store codes a request can meet (spec 06 §10). */
export const TRACE_HTTP_ERRORS: HttpErrorTable<TraceStoreErrorCode> = Object.freeze({
  invalid_trace_store_request: { status: 400 },
  invalid_trace_principal: { status: 401 },
  trace_principal_capacity_reached: { status: 503, retryAfter: true },
  trace_lifecycle_receiver_capacity_reached: { status: 503, retryAfter: true },
  invalid_trace_selector: { status: 400, details: ['field'] },
  invalid_trace_query_options: { status: 400, details: ['field'] },
  replay_gap: { status: 410, details: GAP },
  cursor_ahead: { status: 409, details: GAP },
  trace_store_unavailable: { status: 503, retryAfter: true },
});

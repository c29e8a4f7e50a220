import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import type { EvalServiceErrorCode } from './eval.errors';

const BAD_REQUEST: HttpErrorRule = { status: 400, details: ['keys', 'option', 'reason', 'limit', 'field'] };
const CONFLICT: HttpErrorRule = { status: 409, details: ['phase', 'reason', 'expected', 'actual', 'from', 'to'] };
const BUSY: HttpErrorRule = { status: 429, retryAfter: true };
const CAPACITY: HttpErrorRule = { status: 507 };
const OUTAGE: HttpErrorRule = { status: 503, retryAfter: true, details: ['state', 'reason'] };

/** HTTP answers of the evaluation codes (spec 05 §10); a code left out answers 500 with the code only. */
export const EVAL_HTTP_ERRORS: HttpErrorTable<EvalServiceErrorCode> = Object.freeze({
  invalid_eval_scope: { status: 401 },
  unknown_eval_request_fields: BAD_REQUEST,
  invalid_eval_request: BAD_REQUEST,
  invalid_eval_set: BAD_REQUEST,
  invalid_eval_agent: BAD_REQUEST,
  unknown_eval_agent: BAD_REQUEST,
  invalid_eval_metrics: BAD_REQUEST,
  invalid_eval_options: BAD_REQUEST,
  invalid_eval_cursor: BAD_REQUEST,
  invalid_prune_options: BAD_REQUEST,
  invalid_eval_store_arguments: { status: 400, details: ['argument'] },
  invalid_eval_compare_options: BAD_REQUEST,
  evaluation_request_limit_exceeded: { status: 413, details: ['limit'] },
  not_found: { status: 404 },
  eval_set_revision_conflict: CONFLICT,
  stale_phase: CONFLICT,
  invalid_eval_job_transition: CONFLICT,
  already_terminal: CONFLICT,
  result_not_ready: CONFLICT,
  evaluation_job_terminal: CONFLICT,
  eval_job_not_completed: CONFLICT,
  evaluation_request_validation_timeout: { status: 422 },
  evaluation_request_validation_failed: { status: 422 },
  evaluation_queue_full: BUSY,
  evaluation_request_validation_busy: BUSY,
  eval_set_capacity_reached: CAPACITY,
  eval_job_capacity_reached: CAPACITY,
  eval_baseline_capacity_reached: CAPACITY,
  eval_record_too_large: CAPACITY,
  eval_scope_bytes_exceeded: CAPACITY,
  eval_store_bytes_exceeded: CAPACITY,
  eval_service_unavailable: OUTAGE,
  evaluation_request_validation_unavailable: OUTAGE,
  eval_store_unavailable: OUTAGE,
  evaluation_job_admission_failed: { status: 503, retryAfter: true, details: ['job_id', 'reason'] },
  evaluation_compensation_failed: OUTAGE,
  evaluation_cancel_persistence_failed: OUTAGE,
  timeout: { status: 504 },
});

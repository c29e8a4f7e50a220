import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const EVAL_SERVICE_ERROR_CODES = Object.freeze([
  // options
  'unknown_eval_service_options',
  'invalid_eval_service_options',
  'store_is_managed',
  'invalid_eval_worker',
  'invalid_eval_worker_module',
  'unknown_eval_worker_fields',
  'unknown_eval_store_options',
  'invalid_eval_store_options',
  'invalid_eval_store_module',
  // start
  'eval_store_already_owned',
  'eval_store_identity_changed_during_init',
  'eval_store_identity_unavailable',
  'schema_mismatch',
  'eval_store_recovery_failed',
  // request
  'invalid_eval_scope',
  'unknown_eval_request_fields',
  'invalid_eval_request',
  'invalid_eval_set',
  'invalid_eval_agent',
  'unknown_eval_agent',
  'invalid_eval_metrics',
  'invalid_eval_options',
  'evaluation_request_limit_exceeded',
  'evaluation_request_validation_busy',
  'evaluation_request_validation_timeout',
  'evaluation_request_validation_failed',
  'evaluation_request_validation_unavailable',
  // admission
  'evaluation_queue_full',
  'evaluation_job_admission_failed',
  'evaluation_compensation_failed',
  // store
  'eval_set_revision_conflict',
  'eval_set_capacity_reached',
  'eval_job_capacity_reached',
  'eval_baseline_capacity_reached',
  'eval_record_too_large',
  'eval_scope_bytes_exceeded',
  'eval_store_bytes_exceeded',
  'eval_store_unavailable',
  'stale_phase',
  'invalid_eval_job_transition',
  'invalid_eval_cursor',
  'invalid_eval_store_arguments',
  'invalid_prune_options',
  'invalid_eval_compare_options',
  'eval_job_not_completed',
  'not_found',
  // jobs
  'result_not_ready',
  'evaluation_job_terminal',
  'already_terminal',
  'evaluation_cancel_persistence_failed',
  // service
  'eval_service_unavailable',
  'timeout',
] as const);

/** Every code an {@link EvalServiceError} carries (spec 05 §8). */
export type EvalServiceErrorCode = (typeof EVAL_SERVICE_ERROR_CODES)[number];

const BAD_REQUEST: HttpErrorRule = { status: 400, details: ['field', 'fields', 'reason', 'limit'] };
const CONFLICT: HttpErrorRule = { status: 409, details: ['phase', 'reason', 'expected', 'actual', 'from', 'to'] };
const BUSY: HttpErrorRule = { status: 429, retryAfter: true };
const CAPACITY: HttpErrorRule = { status: 507 };
const OUTAGE: HttpErrorRule = { status: 503, retryAfter: true, details: ['state', 'reason'] };
const FAULT: HttpErrorRule = { status: 500 };

/**
 * The error of the evaluation service and its store: a code and details that never carry set
 * content, inputs, outputs, metadata, scopes, exception text or database text
 * (`details.sqlstate` may carry the five-character SQLSTATE).
 */
export class EvalServiceError extends AgentRuntimeError<EvalServiceErrorCode> {
  /** Every code of {@link EvalServiceErrorCode}. */
  static readonly codes: readonly EvalServiceErrorCode[] = EVAL_SERVICE_ERROR_CODES;

  /**
   * The HTTP answer of each code (spec 05 §10); options and start-up codes are faults of the
   * application (500 with the code only).
   */
  static readonly httpAnswers: HttpErrorTable<EvalServiceErrorCode> = Object.freeze({
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
    invalid_eval_store_arguments: { status: 400, details: ['field', 'fields'] },
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
    // options and start-up: faults of the application
    unknown_eval_service_options: FAULT,
    invalid_eval_service_options: FAULT,
    store_is_managed: FAULT,
    invalid_eval_worker: FAULT,
    invalid_eval_worker_module: FAULT,
    unknown_eval_worker_fields: FAULT,
    unknown_eval_store_options: FAULT,
    invalid_eval_store_options: FAULT,
    invalid_eval_store_module: FAULT,
    eval_store_already_owned: FAULT,
    eval_store_identity_changed_during_init: FAULT,
    eval_store_identity_unavailable: FAULT,
    schema_mismatch: FAULT,
    eval_store_recovery_failed: FAULT,
  });

  constructor(code: EvalServiceErrorCode, details?: ErrorDetails) {
    super('EvalServiceError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isEvalServiceError(value: unknown): value is EvalServiceError {
    return AgentRuntimeError.isAgentRuntimeError(value, EvalServiceError);
  }
}

import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code an {@link EvalServiceError} carries (spec 05 §8, plus `eval_gate_*` of the regression gate). */
export type EvalServiceErrorCode =
  // options
  | 'unknown_eval_service_options'
  | 'invalid_eval_service_options'
  | 'store_is_managed'
  | 'invalid_eval_worker'
  | 'invalid_eval_worker_module'
  | 'unknown_eval_worker_fields'
  | 'unknown_eval_store_options'
  | 'invalid_eval_store_options'
  | 'invalid_eval_store_module'
  // start
  | 'eval_store_already_owned'
  | 'eval_store_identity_changed_during_init'
  | 'eval_store_identity_unavailable'
  | 'schema_mismatch'
  | 'eval_store_recovery_failed'
  // request
  | 'invalid_eval_scope'
  | 'unknown_eval_request_fields'
  | 'invalid_eval_request'
  | 'invalid_eval_set'
  | 'invalid_eval_agent'
  | 'unknown_eval_agent'
  | 'invalid_eval_metrics'
  | 'invalid_eval_options'
  | 'evaluation_request_limit_exceeded'
  | 'evaluation_request_validation_busy'
  | 'evaluation_request_validation_timeout'
  | 'evaluation_request_validation_failed'
  | 'evaluation_request_validation_unavailable'
  // admission
  | 'evaluation_queue_full'
  | 'evaluation_job_admission_failed'
  | 'evaluation_compensation_failed'
  // store
  | 'eval_set_revision_conflict'
  | 'eval_set_capacity_reached'
  | 'eval_job_capacity_reached'
  | 'eval_baseline_capacity_reached'
  | 'eval_record_too_large'
  | 'eval_scope_bytes_exceeded'
  | 'eval_store_bytes_exceeded'
  | 'eval_store_unavailable'
  | 'stale_phase'
  | 'invalid_eval_job_transition'
  | 'invalid_eval_cursor'
  | 'invalid_eval_store_arguments'
  | 'invalid_prune_options'
  | 'invalid_eval_compare_options'
  | 'eval_job_not_completed'
  | 'not_found'
  // jobs
  | 'result_not_ready'
  | 'evaluation_job_terminal'
  | 'already_terminal'
  | 'evaluation_cancel_persistence_failed'
  // service
  | 'eval_service_unavailable'
  | 'timeout';

/**
 * The error of the evaluation service and its store: a code and details that never carry set
 * content, inputs, outputs, metadata, scopes, exception text or database text
 * (`details.sqlstate` may carry the five-character SQLSTATE).
 */
export class EvalServiceError extends AgentRuntimeError<EvalServiceErrorCode> {
  constructor(code: EvalServiceErrorCode, details?: ErrorDetails) {
    super('EvalServiceError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isEvalServiceError(value: unknown): value is EvalServiceError {
    return AgentRuntimeError.isAgentRuntimeError(value, EvalServiceError);
  }
}

import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code a {@link RunnerError} carries (spec 03 §12). */
export type RunnerErrorCode =
  | 'invalid_runner_options'
  | 'invalid_runner_admission_control'
  | 'invalid_runner_runtime_policy'
  | 'admission_failed'
  | 'runtime_policy_denied'
  | 'runtime_policy_audit_persistence_failed'
  | 'invalid_plugin_amendment'
  | 'plugin_failed'
  | 'model_call_limit_exceeded'
  | 'ledger_failed'
  | 'session_store_failed'
  | 'invocation_fence_lost'
  | 'model_failed'
  | 'schema_mismatch'
  | 'session_not_found'
  | 'invocation_not_found'
  | 'run_not_found'
  | 'agent_not_found'
  | 'resume_input_required'
  | 'invalid_run_request'
  | 'invocation_owned'
  | 'invocation_completed'
  | 'session_state_conflict'
  | 'run_not_active'
  | 'run_events_evicted'
  | 'run_capacity_reached'
  | 'cancelled'
  | 'timeout';

/**
 * The error of the Runner, its sessions, models and run registry: a code and content-free details
 * (never user content, tool arguments or results, exception text from user code, or handles).
 */
export class RunnerError extends AgentRuntimeError<RunnerErrorCode> {
  constructor(code: RunnerErrorCode, details?: ErrorDetails) {
    super('RunnerError', code, details);
  }

  /** Brand check that runs no user code. */
  static isRunnerError(value: unknown): value is RunnerError {
    return AgentRuntimeError.isAgentRuntimeError(value, RunnerError);
  }
}

import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Codes `RuntimePolicy.compile` raises, in the order it checks them (spec 02 §3). */
export type RuntimePolicyCompileErrorCode =
  | 'invalid_runtime_policy'
  | 'unsupported_runtime_policy_options'
  | 'invalid_runtime_policy_rules'
  | 'unsupported_runtime_policy_rules'
  | 'invalid_runtime_policy_allow'
  | 'invalid_runtime_policy_deny'
  | 'invalid_max_argument_bytes'
  | 'invalid_max_content_bytes'
  | 'invalid_runtime_policy_id';

/** Every code a {@link RuntimePolicyError} carries (spec 02 §7). */
export type RuntimePolicyErrorCode =
  | RuntimePolicyCompileErrorCode
  | 'unsupported_json_term'
  | 'invalid_utf8'
  | 'invalid_measure_limit'
  | 'invalid_runtime_policy_module_options'
  | 'runtime_policy_audit_persistence_failed'
  | 'invalid_runtime_policy_audit_event'
  | 'runtime_policy_audit_log_not_configured'
  | 'schema_mismatch';

/**
 * The error of the runtime policy module: a code, and details that never carry values, arguments,
 * content or exception text (a JSON path lists keys and indices only).
 */
export class RuntimePolicyError extends AgentRuntimeError<RuntimePolicyErrorCode> {
  constructor(code: RuntimePolicyErrorCode, details?: ErrorDetails) {
    super('RuntimePolicyError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isRuntimePolicyError(value: unknown): value is RuntimePolicyError {
    return AgentRuntimeError.isAgentRuntimeError(value, RuntimePolicyError);
  }
}

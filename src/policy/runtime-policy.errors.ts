import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const COMPILE_ERROR_CODES = [
  'invalid_runtime_policy',
  'unsupported_runtime_policy_options',
  'invalid_runtime_policy_rules',
  'unsupported_runtime_policy_rules',
  'invalid_runtime_policy_allow',
  'invalid_runtime_policy_deny',
  'invalid_max_argument_bytes',
  'invalid_max_content_bytes',
  'invalid_runtime_policy_id',
] as const;

const RUNTIME_POLICY_ERROR_CODES = Object.freeze([
  ...COMPILE_ERROR_CODES,
  'unsupported_json_term',
  'invalid_utf8',
  'invalid_measure_limit',
  'invalid_runtime_policy_module_options',
  'runtime_policy_audit_persistence_failed',
  'invalid_runtime_policy_audit_event',
  'runtime_policy_audit_log_not_configured',
  'runtime_policy_audit_log_unavailable',
  'schema_mismatch',
] as const);

/** Codes `RuntimePolicy.compile` raises, in the order it checks them (spec 02 §3). */
export type RuntimePolicyCompileErrorCode = (typeof COMPILE_ERROR_CODES)[number];

/** Every code a {@link RuntimePolicyError} carries (spec 02 §7). */
export type RuntimePolicyErrorCode = (typeof RUNTIME_POLICY_ERROR_CODES)[number];

const FAULT: HttpErrorRule = { status: 500 };

/**
 * The error of the runtime policy module: a code, and details that never carry values, arguments,
 * content or exception text (a JSON path lists keys and indices only).
 */
export class RuntimePolicyError extends AgentRuntimeError<RuntimePolicyErrorCode> {
  /** Every code of {@link RuntimePolicyErrorCode}. */
  static readonly codes: readonly RuntimePolicyErrorCode[] = RUNTIME_POLICY_ERROR_CODES;

  /**
   * The HTTP answer of each code: a decision that could not be recorded, or an audit log that
   * cannot be read for verification, is an outage (503 with `Retry-After`, spec 02 §8); every other code is a fault of the application (500 with the code
   * only). A denial is not an error: it answers `runtime_policy_denied` (`policy-http.ts`).
   */
  static readonly httpAnswers: HttpErrorTable<RuntimePolicyErrorCode> = Object.freeze({
    runtime_policy_audit_persistence_failed: { status: 503, retryAfter: true },
    runtime_policy_audit_log_unavailable: { status: 503, retryAfter: true },
    ...(Object.fromEntries(COMPILE_ERROR_CODES.map((code) => [code, FAULT])) as Record<RuntimePolicyCompileErrorCode, HttpErrorRule>),
    unsupported_json_term: FAULT,
    invalid_utf8: FAULT,
    invalid_measure_limit: FAULT,
    invalid_runtime_policy_module_options: FAULT,
    invalid_runtime_policy_audit_event: FAULT,
    runtime_policy_audit_log_not_configured: FAULT,
    schema_mismatch: FAULT,
  });

  constructor(code: RuntimePolicyErrorCode, details?: ErrorDetails) {
    super('RuntimePolicyError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isRuntimePolicyError(value: unknown): value is RuntimePolicyError {
    return AgentRuntimeError.isAgentRuntimeError(value, RuntimePolicyError);
  }
}

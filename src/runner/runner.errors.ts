import { AdmissionError } from '../admission/admission.errors';
import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import { denialStatus } from '../policy/policy-http';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const RUNNER_ERROR_CODES = Object.freeze([
  'invalid_runner_options',
  'invalid_runner_admission_control',
  'invalid_runner_runtime_policy',
  'admission_failed',
  'runtime_policy_denied',
  'runtime_policy_audit_persistence_failed',
  'invalid_plugin_amendment',
  'plugin_failed',
  'model_call_limit_exceeded',
  'ledger_failed',
  'session_store_failed',
  'invocation_fence_lost',
  'model_failed',
  'schema_mismatch',
  'session_not_found',
  'invocation_not_found',
  'run_not_found',
  'agent_not_found',
  'resume_input_required',
  'invalid_run_request',
  'invocation_owned',
  'invocation_completed',
  'session_state_conflict',
  'run_not_active',
  'run_events_evicted',
  'run_capacity_reached',
  'cancelled',
  'timeout',
] as const);

/** Every code a {@link RunnerError} carries (spec 03 §12). */
export type RunnerErrorCode = (typeof RUNNER_ERROR_CODES)[number];

const NOT_FOUND: HttpErrorRule = { status: 404 };
const CONFLICT: HttpErrorRule = { status: 409 };
const BAD_REQUEST: HttpErrorRule = { status: 400, details: ['field', 'fields', 'unknown_fields'] };
const FAULT: HttpErrorRule = { status: 500 };
const DECISION_SUMMARY = ['decision_id', 'policy_id', 'operation', 'outcome', 'reason'];
const CLIENT_CLOSED_REQUEST = 499;

/**
 * `admission_failed` takes the status and `Retry-After` of its `details.reason` in the admission
 * table (spec 01 §12, spec 09 §10) and shows the reason, with the detail keys that table shows for
 * the reason (`limit_scope`, `retry_after_ms`, …), when it is an admission code; any other reason is
 * 500 with the code only.
 */
function admissionFailed(details: ErrorDetails | undefined): HttpErrorRule {
  const reason = details?.reason;
  if (typeof reason !== 'string' || !Object.hasOwn(AdmissionError.httpAnswers, reason)) return FAULT;
  const rule = AdmissionError.httpAnswers[reason as keyof typeof AdmissionError.httpAnswers];
  return { status: rule.status, retryAfter: rule.retryAfter === true, details: ['reason', ...(rule.details ?? [])] };
}

/**
 * The error of the Runner, its sessions, models and run registry: a code and content-free details
 * (never user content, tool arguments or results, exception text from user code, or handles).
 */
export class RunnerError extends AgentRuntimeError<RunnerErrorCode> {
  /** Every code of {@link RunnerErrorCode}. */
  static readonly codes: readonly RunnerErrorCode[] = RUNNER_ERROR_CODES;

  /**
   * The HTTP answer of each code (spec 03 §12). `admission_failed` answers as the admission table
   * maps its reason; `runtime_policy_denied` is 413 for a budget reason and 403 otherwise (spec 02
   * §5), with the five-key decision summary as details; the constructor's option codes and
   * `schema_mismatch` are faults of the application (500).
   */
  static readonly httpAnswers: HttpErrorTable<RunnerErrorCode> = Object.freeze({
    invalid_runner_options: FAULT,
    invalid_runner_admission_control: FAULT,
    invalid_runner_runtime_policy: FAULT,
    schema_mismatch: FAULT,
    admission_failed: admissionFailed,
    runtime_policy_denied: (details: ErrorDetails | undefined) => ({ status: denialStatus(details?.reason), details: DECISION_SUMMARY }),
    runtime_policy_audit_persistence_failed: { status: 503, retryAfter: true, details: ['target'] },
    invalid_plugin_amendment: { status: 500, details: ['hook', 'reason'] },
    plugin_failed: { status: 500, details: ['hook', 'plugin'] },
    model_call_limit_exceeded: { status: 500, details: ['limit'] },
    ledger_failed: { status: 500, details: ['reason'] },
    session_store_failed: { status: 500, details: ['operation'] },
    invocation_fence_lost: FAULT,
    model_failed: { status: 502, details: ['reason', 'status'] },
    session_not_found: NOT_FOUND,
    invocation_not_found: NOT_FOUND,
    run_not_found: NOT_FOUND,
    agent_not_found: NOT_FOUND,
    resume_input_required: BAD_REQUEST,
    invalid_run_request: BAD_REQUEST,
    invocation_owned: CONFLICT,
    invocation_completed: CONFLICT,
    session_state_conflict: CONFLICT,
    run_not_active: { status: 409, details: ['status'] },
    run_events_evicted: { status: 410, details: ['oldest_seq'] },
    run_capacity_reached: { status: 503, retryAfter: true, details: ['limit'] },
    // terminal-item codes; they reach HTTP only where an application runs an invocation inside a request
    cancelled: { status: CLIENT_CLOSED_REQUEST },
    timeout: { status: 504, details: ['timeout_ms'] },
  });

  constructor(code: RunnerErrorCode, details?: ErrorDetails) {
    super('RunnerError', code, details);
  }

  /** Brand check that runs no user code. */
  static isRunnerError(value: unknown): value is RunnerError {
    return AgentRuntimeError.isAgentRuntimeError(value, RunnerError);
  }
}

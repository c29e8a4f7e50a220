import { ADMISSION_HTTP_ERRORS } from '../admission/admission-http';
import type { AdmissionErrorCode } from '../admission/admission.errors';
import { httpErrorAnswer, httpErrorBody, type HttpErrorAnswer, type HttpErrorRule, type HttpErrorTable } from '../http/http-error-mapper';
import { RunnerError, type RunnerErrorCode } from './runner.errors';

const NOT_FOUND: HttpErrorRule = { status: 404 };
const CONFLICT: HttpErrorRule = { status: 409 };
const BAD_REQUEST: HttpErrorRule = { status: 400, details: ['field', 'fields', 'unknown_fields'] };
const SUMMARY_KEYS = ['decision_id', 'policy_id', 'operation', 'outcome', 'reason'] as const;
const BUDGET_REASONS = new Set(['argument_budget_exceeded', 'content_budget_exceeded']);
const CLIENT_CLOSED_REQUEST = 499;

/**
 * HTTP answers of the Runner's codes (spec 03 §12). `admission_failed` and `runtime_policy_denied`
 * are answered by {@link runnerHttpAnswer} from their details; a code left out (the constructor's
 * option codes, `schema_mismatch`) is 500 with the code only.
 */
export const RUNNER_HTTP_ERRORS: HttpErrorTable<RunnerErrorCode> = Object.freeze({
  runtime_policy_audit_persistence_failed: { status: 503, retryAfter: true, details: ['target'] },
  invalid_plugin_amendment: { status: 500, details: ['hook', 'reason'] },
  plugin_failed: { status: 500, details: ['hook', 'plugin'] },
  model_call_limit_exceeded: { status: 500, details: ['limit'] },
  ledger_failed: { status: 500, details: ['reason'] },
  session_store_failed: { status: 500, details: ['operation'] },
  invocation_fence_lost: { status: 500 },
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

/**
 * The HTTP form of a {@link RunnerError} (`{status_code, error, code, details?}`), or `undefined`
 * for anything else. `admission_failed` takes the status and `Retry-After` of its `details.reason`
 * in the admission table (spec 01 §12), showing the reason only when it is an admission code;
 * `runtime_policy_denied` is 413 for a budget reason and 403 otherwise (spec 02 §5), with the
 * five-key decision summary as details.
 */
export function runnerHttpAnswer(error: unknown): HttpErrorAnswer | undefined {
  if (!RunnerError.isRunnerError(error)) return undefined;
  if (error.code === 'admission_failed') return admissionFailedAnswer(error);
  if (error.code === 'runtime_policy_denied') {
    const reason = error.details?.reason;
    const status = typeof reason === 'string' && BUDGET_REASONS.has(reason) ? 413 : 403;
    return httpErrorAnswer(error, { runtime_policy_denied: { status, details: SUMMARY_KEYS } });
  }
  return httpErrorAnswer(error, RUNNER_HTTP_ERRORS);
}

function admissionFailedAnswer(error: RunnerError): HttpErrorAnswer {
  const reason = error.details?.reason;
  const rule = typeof reason === 'string' && Object.hasOwn(ADMISSION_HTTP_ERRORS, reason) ? ADMISSION_HTTP_ERRORS[reason as AdmissionErrorCode] : undefined;
  if (!rule) return Object.freeze({ status: 500, retryAfter: false, body: httpErrorBody(500, 'admission_failed') });
  return Object.freeze({ status: rule.status, retryAfter: rule.retryAfter === true, body: httpErrorBody(rule.status, 'admission_failed', { reason: reason as string }) });
}

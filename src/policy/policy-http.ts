import { HttpException } from '@nestjs/common';
import { httpErrorAnswer, httpErrorBody, httpErrorException, type HttpErrorAnswer, type HttpErrorTable } from '../http/http-error-mapper';
import { summarizeDecision, type PolicyDecision } from './policy-decision';
import { RuntimePolicyError, type RuntimePolicyErrorCode } from './runtime-policy.errors';

const BUDGET_REASONS = new Set(['argument_budget_exceeded', 'content_budget_exceeded']);

/**
 * HTTP answers of the policy codes: a decision that could not be recorded is an outage (503 with
 * `Retry-After`); every other code is a fault of the application (500 with the code only).
 */
export const POLICY_HTTP_ERRORS: HttpErrorTable<RuntimePolicyErrorCode> = Object.freeze({
  runtime_policy_audit_persistence_failed: { status: 503, retryAfter: true },
});

/** HTTP status of a denial: 413 for a budget, 403 otherwise (spec 02 §5). */
export function denialStatus(decision: PolicyDecision): 403 | 413 {
  return BUDGET_REASONS.has(decision.reason) ? 413 : 403;
}

/** `{status_code, error, code: 'runtime_policy_denied', decision: summary}`: never the input or output. */
export function denialException(decision: PolicyDecision): HttpException {
  const status = denialStatus(decision);
  return new HttpException({ ...httpErrorBody(status, 'runtime_policy_denied'), decision: summarizeDecision(decision) }, status);
}

/** The fail-closed answer when a decision could not be recorded (the interceptor sets `Retry-After`). */
export function auditFailureAnswer(): HttpErrorAnswer {
  return httpErrorAnswer(new RuntimePolicyError('runtime_policy_audit_persistence_failed'), POLICY_HTTP_ERRORS);
}

/** Throwable form of {@link auditFailureAnswer}. */
export function auditFailureException(): HttpException {
  return httpErrorException(auditFailureAnswer());
}

/** The HTTP form of a {@link RuntimePolicyError}; `undefined` for anything else. */
export function policyHttpAnswer(error: unknown): HttpErrorAnswer | undefined {
  return RuntimePolicyError.isRuntimePolicyError(error) ? httpErrorAnswer(error, POLICY_HTTP_ERRORS) : undefined;
}

import { HttpException } from '@nestjs/common';
import { summarizeDecision, type PolicyDecision } from './policy-decision';

const BUDGET_REASONS = new Set(['argument_budget_exceeded', 'content_budget_exceeded']);

/** HTTP status of a denial: 413 for a budget, 403 otherwise (spec 02 §5). */
export function denialStatus(decision: PolicyDecision): 403 | 413 {
  return BUDGET_REASONS.has(decision.reason) ? 413 : 403;
}

/** `{status_code, error, code: 'runtime_policy_denied', decision: summary}`: never the input or output. */
export function denialException(decision: PolicyDecision): HttpException {
  const status = denialStatus(decision);
  return new HttpException(
    { status_code: status, error: status === 413 ? 'Payload Too Large' : 'Forbidden', code: 'runtime_policy_denied', decision: summarizeDecision(decision) },
    status,
  );
}

/** The fail-closed answer when a decision could not be recorded. */
export function auditFailureException(): HttpException {
  return new HttpException({ status_code: 503, error: 'Service Unavailable', code: 'runtime_policy_audit_persistence_failed' }, 503);
}

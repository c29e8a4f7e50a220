import { httpErrorAnswer, httpErrorBody, type HttpErrorAnswer, type HttpErrorBody } from '../http/http-error-mapper';
import { summarizeDecision, type PolicyDecision } from './policy-decision';
import type { PolicyDecisionSummary } from './runtime-policy.types';
import { RuntimePolicyError } from './runtime-policy.errors';

const BUDGET_REASONS: ReadonlySet<unknown> = new Set(['argument_budget_exceeded', 'content_budget_exceeded']);

/** Body of a denial: the package shape with the decision summary, never the input or output. */
export interface DenialBody extends HttpErrorBody {
  readonly code: 'runtime_policy_denied';
  readonly decision: PolicyDecisionSummary;
}

/** HTTP status of a denial by its reason: 413 for a budget, 403 otherwise (spec 02 §5). */
export function denialStatus(reason: unknown): 403 | 413 {
  return BUDGET_REASONS.has(reason) ? 413 : 403;
}

/** `{status_code, error, code: 'runtime_policy_denied', decision: summary}` with its status. */
export function denialAnswer(decision: PolicyDecision): HttpErrorAnswer<DenialBody> {
  const status = denialStatus(decision.reason);
  const body: DenialBody = { ...httpErrorBody(status, 'runtime_policy_denied'), code: 'runtime_policy_denied', decision: summarizeDecision(decision) };
  return { status, retryAfter: false, body };
}

/** The fail-closed answer when a decision could not be recorded (the interceptor sets `Retry-After`). */
export function auditFailureAnswer(): HttpErrorAnswer {
  return httpErrorAnswer(new RuntimePolicyError('runtime_policy_audit_persistence_failed'), RuntimePolicyError.httpAnswers);
}

import { JsonError, measure, measureContent, type MeasureResult } from '../json';
import { INVALID_SUBJECT } from './policy-decision';
import { isValidSubject, undeclaredNameDigest, UNKNOWN_TOOL_SUBJECT } from './policy-name';
import type { CompiledPolicySpec, CompiledRules, CompiledSelector } from './runtime-policy-compiler';
import type { PolicyBudgetKind, PolicyOperation, PolicyReason } from './runtime-policy.types';

/** What distinguishes `checkAgent`, `checkTool` and `checkContent` (spec 02 §4, first table). */
export interface PolicyCheck {
  readonly operation: PolicyOperation;
  readonly rules: 'agents' | 'tools' | null;
  readonly budgetKind: PolicyBudgetKind;
  readonly measure: (value: unknown, limitBytes: number) => MeasureResult;
  readonly invalidReason: 'invalid_arguments' | 'invalid_content';
  readonly exceededReason: 'argument_budget_exceeded' | 'content_budget_exceeded';
  /** A tool name the caller did not declare: judged by the rules, recorded as {@link UNKNOWN_TOOL_SUBJECT}. */
  readonly undeclared?: true;
}

export const AGENT_CHECK: PolicyCheck = Object.freeze({
  operation: 'agent_invocation',
  rules: 'agents',
  budgetKind: 'content',
  measure: measureContent,
  invalidReason: 'invalid_content',
  exceededReason: 'content_budget_exceeded',
});

export const TOOL_CHECK: PolicyCheck = Object.freeze({
  operation: 'tool_call',
  rules: 'tools',
  budgetKind: 'arguments',
  measure,
  invalidReason: 'invalid_arguments',
  exceededReason: 'argument_budget_exceeded',
});

export const CONTENT_CHECK: PolicyCheck = Object.freeze({
  operation: 'content',
  rules: null,
  budgetKind: 'content',
  measure: measureContent,
  invalidReason: 'invalid_content',
  exceededReason: 'content_budget_exceeded',
});

/** `checkTool` for a name the caller did not declare (a name a model made up). */
export const UNDECLARED_TOOL_CHECK: PolicyCheck = Object.freeze({ ...TOOL_CHECK, undeclared: true });

/** The outcome of steps 2–5 of a check, before it becomes a record. */
export interface Verdict {
  readonly subject: string;
  /** The digest of an undeclared tool name recorded as {@link UNKNOWN_TOOL_SUBJECT}; `null` for a recorded name. */
  readonly subjectDigest: string | null;
  readonly reason: PolicyReason;
  readonly measuredBytes: number | null;
}

const matches = (selector: CompiledSelector, name: string): boolean => selector === 'all' || selector.has(name);

function authorisation(rules: CompiledRules, subject: string): PolicyReason | null {
  if (matches(rules.deny, subject)) return 'explicitly_denied';
  return matches(rules.allow, subject) ? null : 'not_allowed';
}

/** The limit a check measures against. */
export function limitOf(check: PolicyCheck, policy: CompiledPolicySpec): number {
  return check.budgetKind === 'arguments' ? policy.maxArgumentBytes : policy.maxContentBytes;
}

/**
 * Steps 2–5 of spec 02 §4: subject, authorisation, budget; the first failing step decides. The
 * value is touched only in the budget step, so a denied subject's value is never read. Never throws.
 * An undeclared tool name is judged like any name and recorded as {@link recordedSubject} says.
 */
export function evaluateCheck(check: PolicyCheck, policy: CompiledPolicySpec, subject: unknown, value: unknown): Verdict {
  if (!isValidSubject(subject)) return { subject: INVALID_SUBJECT, subjectDigest: null, reason: 'invalid_subject', measuredBytes: null };
  const { reason, measuredBytes } = judge(check, policy, subject, value);
  if (check.undeclared === true) return { subject: UNKNOWN_TOOL_SUBJECT, subjectDigest: undeclaredNameDigest(subject), reason, measuredBytes };
  return { subject, subjectDigest: null, reason, measuredBytes };
}

/**
 * What a decision records as its subject: a valid declared name as it is, an undeclared tool name as
 * {@link UNKNOWN_TOOL_SUBJECT} with its digest, anything that is not a valid name as `'<invalid>'`.
 */
export function recordedSubject(check: PolicyCheck, subject: unknown): Pick<Verdict, 'subject' | 'subjectDigest'> {
  if (!isValidSubject(subject)) return { subject: INVALID_SUBJECT, subjectDigest: null };
  return check.undeclared === true ? { subject: UNKNOWN_TOOL_SUBJECT, subjectDigest: undeclaredNameDigest(subject) } : { subject, subjectDigest: null };
}

function judge(check: PolicyCheck, policy: CompiledPolicySpec, subject: string, value: unknown): Pick<Verdict, 'reason' | 'measuredBytes'> {
  try {
    if (check.rules !== null) {
      const denial = authorisation(policy[check.rules], subject);
      if (denial !== null) return { reason: denial, measuredBytes: null };
    }
    let measured: MeasureResult;
    try {
      measured = check.measure(value, limitOf(check, policy));
    } catch (error) {
      if (!isUnmeasurable(error)) throw error;
      return { reason: check.invalidReason, measuredBytes: null };
    }
    if (measured.exceeded) return { reason: check.exceededReason, measuredBytes: measured.bytes };
    return { reason: 'allowed', measuredBytes: measured.bytes };
  } catch {
    // what user code threw (an element getter, a detached buffer) is never looked at, only denied
    return { reason: 'policy_evaluation_failed', measuredBytes: null };
  }
}

function isUnmeasurable(error: unknown): boolean {
  return (
    JsonError.isJsonError(error) &&
    (error.code === 'unsupported_json_term' || error.code === 'invalid_utf8')
  );
}

/** Which check produced a decision (spec 02 §4). */
export type PolicyOperation = 'agent_invocation' | 'tool_call' | 'content';

/** Allow or deny. */
export type PolicyOutcome = 'allow' | 'deny';

/** Every reason a decision can carry (spec 02 §5), in the spec's order. */
export const POLICY_REASONS = [
  'allowed',
  'not_allowed',
  'explicitly_denied',
  'argument_budget_exceeded',
  'content_budget_exceeded',
  'invalid_arguments',
  'invalid_content',
  'invalid_subject',
  'invalid_policy',
  'policy_evaluation_failed',
] as const;

/** Why a decision came out as it did (spec 02 §5). */
export type PolicyReason = (typeof POLICY_REASONS)[number];

/** Which byte budget a check measured against. */
export type PolicyBudgetKind = 'arguments' | 'content';

/** The budget part of a {@link PolicyDecision}. */
export interface PolicyDecisionBudget {
  readonly kind: PolicyBudgetKind;
  /** Exact for `allowed`, above `limit_bytes` for a budget denial, `null` otherwise. */
  readonly measured_bytes: number | null;
  readonly limit_bytes: number;
}

/**
 * A content-free audit decision (spec 02 §5): deep-frozen, JSON-safe, exactly these keys. It never
 * holds arguments, content, credentials, exception text or object handles.
 */
export interface PolicyDecision {
  /** 2 since `subject_digest` and `approved_by` (records of schema 1 have no such key and still verify). */
  readonly schema_version: 2;
  /** `'decision-'` + a lowercase UUIDv7; increasing as strings in issue order within a process. */
  readonly decision_id: string;
  /** Integer wall-clock milliseconds from the policy's clock. */
  readonly decided_at_ms: number;
  readonly policy_id: string;
  readonly policy_fingerprint: string;
  readonly operation: PolicyOperation;
  /**
   * The agent, tool or content subject name; `'unknown_tool'` for a tool name the caller did not
   * declare (a name a model made up); `'<invalid>'` for a value that is not a valid name.
   */
  readonly subject: string;
  /**
   * For subject `'unknown_tool'`: the first 16 hex digits of the SHA-256 of the undeclared name's
   * UTF-8 bytes, to match repeats of one name; `null` for every other subject.
   */
  readonly subject_digest: string | null;
  /**
   * The principal id of whoever approved the call when a tool call is checked again after a human's
   * confirmation (an identifier, never content); `null` for every other decision.
   */
  readonly approved_by: string | null;
  readonly outcome: PolicyOutcome;
  readonly reason: PolicyReason;
  readonly budget: PolicyDecisionBudget;
  /** Lowercase hex SHA-256 of `canonicalJson` of the record without this key. */
  readonly decision_digest: string;
}

/** The part of a decision shown in errors, HTTP bodies and model-visible denials. */
export interface PolicyDecisionSummary {
  readonly decision_id: string;
  readonly policy_id: string;
  readonly operation: PolicyOperation;
  readonly outcome: PolicyOutcome;
  readonly reason: PolicyReason;
}

/** Payload of `agent_runtime.policy.decision` (spec 02 §6): no subject, value, digest or decision id. */
export interface PolicyDecisionEvent {
  readonly limit_bytes: number;
  /** Present only when the decision measured a size. */
  readonly measured_bytes?: number;
  readonly policy_id: string;
  readonly operation: PolicyOperation;
  readonly outcome: PolicyOutcome;
  readonly reason: PolicyReason;
}

/** A selector as a policy reports it: `'all'` or its de-duplicated names sorted by UTF-16 code units. */
export type NormalizedSelector = 'all' | readonly string[];

/** Normalised allow and deny selectors. */
export interface NormalizedRules {
  readonly allow: NormalizedSelector;
  readonly deny: NormalizedSelector;
}

/** What `describe()` reports for a compiled policy (deep-frozen). */
export interface RuntimePolicyDescription {
  readonly schema_version: 1;
  readonly id: string;
  readonly fingerprint: string;
  readonly agents: NormalizedRules;
  readonly tools: NormalizedRules;
  readonly max_argument_bytes: number;
  readonly max_content_bytes: number;
}

/** What `describe()` reports when called on anything but a compiled policy. */
export interface InvalidRuntimePolicyDescription {
  readonly schema_version: 1;
  readonly status: 'invalid';
}

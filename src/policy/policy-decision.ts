import { systemClock, type Clock } from '../shared/time/clock';
import { readOwnData } from '../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../shared/options/plain-object';
import { sha256Hex } from '../shared/text/sha256';
import { uuidV7 } from '../shared/ids/uuid-v7';
import { canonicalJson } from '../json';
import { isValidId } from '../shared/ids/id-rule';
import { isValidSubject, MAX_POLICY_ID_BYTES, UNDECLARED_NAME_DIGEST_LENGTH, UNKNOWN_TOOL_SUBJECT } from './policy-name';
import { RuntimePolicyError } from './runtime-policy.errors';
import type {
  PolicyBudgetKind,
  PolicyDecision,
  PolicyDecisionSummary,
  PolicyOperation,
  PolicyOutcome,
  PolicyReason,
} from './runtime-policy.types';

export type { PolicyDecision } from './runtime-policy.types';

/** `policy_id` of decisions made on a receiver that is not a compiled policy. */
export const INVALID_POLICY_ID = 'invalid-policy';
/** `policy_fingerprint` of those decisions: SHA-256 of `{"status":"invalid"}`. */
export const INVALID_POLICY_FINGERPRINT = sha256Hex(canonicalJson({ status: 'invalid' }));
/** `subject` of a decision whose subject name was not valid. */
export const INVALID_SUBJECT = '<invalid>';

/** Everything a decision says except its id, time and digest. */
export interface DecisionFacts {
  readonly policyId: string;
  readonly policyFingerprint: string;
  readonly operation: PolicyOperation;
  readonly subject: string;
  /** The digest of an undeclared tool name (subject `'unknown_tool'`), else `null`. */
  readonly subjectDigest: string | null;
  /** The principal id of whoever approved the call (a confirmed tool call), else `null`. */
  readonly approvedBy: string | null;
  readonly reason: PolicyReason;
  readonly budgetKind: PolicyBudgetKind;
  readonly measuredBytes: number | null;
  readonly limitBytes: number;
}

/** Integer wall-clock ms from `clock`; a clock that throws or gives a non-finite time yields `Date.now()`. */
function decidedAtMs(clock: Clock): number {
  try {
    const ms = Math.floor(clock.wallNow());
    if (Number.isSafeInteger(ms)) return ms;
  } catch {
    // a broken clock must not turn a decision into an exception
  }
  return systemClock.wallNow();
}

/** The `schema_version` of the decisions this release builds (2 added `subject_digest` and `approved_by`). */
export const DECISION_SCHEMA_VERSION = 2;

/** Builds the deep-frozen decision record of spec 02 §5, digest included. */
export function buildDecision(facts: DecisionFacts, clock: Clock): PolicyDecision {
  const decidedAt = decidedAtMs(clock);
  const decisionId = `decision-${uuidV7(decidedAt)}`;
  const outcome: PolicyOutcome = facts.reason === 'allowed' ? 'allow' : 'deny';
  const budget = Object.freeze({ kind: facts.budgetKind, measured_bytes: facts.measuredBytes, limit_bytes: facts.limitBytes });
  // one object literal: spreading a record into a new object and freezing that costs microseconds
  return Object.freeze({
    schema_version: DECISION_SCHEMA_VERSION,
    decision_id: decisionId,
    decided_at_ms: decidedAt,
    policy_id: facts.policyId,
    policy_fingerprint: facts.policyFingerprint,
    operation: facts.operation,
    subject: facts.subject,
    subject_digest: facts.subjectDigest,
    approved_by: facts.approvedBy,
    outcome,
    reason: facts.reason,
    budget,
    decision_digest: sha256Hex(canonicalRecordJson(facts, decisionId, decidedAt, outcome)),
  });
}

/**
 * `canonicalJson` of the record {@link buildDecision} builds (without its digest), written directly:
 * its keys are fixed and listed here in canonical order, `decided_at_ms` and the budget figures are
 * safe integers (or `null`), and its strings are tags, hex digits (or `null`), the decision id and two
 * validated, well-formed names and an approver id, whose `JSON.stringify` form is their canonical form. Checked against
 * `canonicalJson` in the tests.
 */
export function canonicalRecordJson(facts: DecisionFacts, decisionId: string, decidedAt: number, outcome: PolicyOutcome): string {
  return (
    `{"approved_by":${facts.approvedBy === null ? 'null' : JSON.stringify(facts.approvedBy)},"budget":{"kind":"${facts.budgetKind}","limit_bytes":${facts.limitBytes},"measured_bytes":${facts.measuredBytes}},` +
    `"decided_at_ms":${decidedAt},"decision_id":"${decisionId}","operation":"${facts.operation}","outcome":"${outcome}",` +
    `"policy_fingerprint":"${facts.policyFingerprint}","policy_id":${JSON.stringify(facts.policyId)},` +
    `"reason":"${facts.reason}","schema_version":${DECISION_SCHEMA_VERSION},"subject":${JSON.stringify(facts.subject)},` +
    `"subject_digest":${facts.subjectDigest === null ? 'null' : `"${facts.subjectDigest}"`}}`
  );
}

/** The keys of a schema 1 record, written by releases before `subject_digest` and `approved_by`; such records still verify. */
const DECISION_KEYS_V1 = [
  'schema_version',
  'decision_id',
  'decided_at_ms',
  'policy_id',
  'policy_fingerprint',
  'operation',
  'subject',
  'outcome',
  'reason',
  'budget',
  'decision_digest',
] as const;
const DECISION_KEYS = [...DECISION_KEYS_V1, 'subject_digest', 'approved_by'] as const;
const BUDGET_KEYS = ['kind', 'measured_bytes', 'limit_bytes'] as const;

const DECISION_ID = /^decision-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const NAME_DIGEST = new RegExp(`^[0-9a-f]{${UNDECLARED_NAME_DIGEST_LENGTH}}$`);

const COMMON_REASONS = ['allowed', 'invalid_subject', 'invalid_policy', 'policy_evaluation_failed'];
const AUTHORISATION_REASONS = ['not_allowed', 'explicitly_denied'];

/** Reasons each operation can give, with the budget kind it measures against. */
const REASONS_BY_OPERATION: Readonly<Record<PolicyOperation, { kind: PolicyBudgetKind; reasons: ReadonlySet<string> }>> = {
  agent_invocation: {
    kind: 'content',
    reasons: new Set([...COMMON_REASONS, ...AUTHORISATION_REASONS, 'content_budget_exceeded', 'invalid_content']),
  },
  tool_call: {
    kind: 'arguments',
    reasons: new Set([...COMMON_REASONS, ...AUTHORISATION_REASONS, 'argument_budget_exceeded', 'invalid_arguments']),
  },
  content: {
    kind: 'content',
    reasons: new Set([...COMMON_REASONS, 'content_budget_exceeded', 'invalid_content']),
  },
};

/**
 * The own data properties `keys` of a plain, non-Proxy object that has exactly those own keys;
 * `null` otherwise. Runs no getter and no trap.
 */
function exactRecord<K extends string>(value: unknown, keys: readonly K[]): Record<K, unknown> | null {
  const own = readOwnData(value, keys);
  if (own === null || own.unknown.length > 0 || own.accessors.length > 0) return null;
  return keys.every((key) => key in own.values) ? (own.values as Record<K, unknown>) : null;
}

function isOperation(value: unknown): value is PolicyOperation {
  return value === 'agent_invocation' || value === 'tool_call' || value === 'content';
}

/**
 * True when `value` has the shape of a decision record of spec 02 §5 as this release builds it
 * (`schema_version` 2): exactly its keys as own data properties, each of the right type, and a
 * reason, outcome, budget kind, measured size, subject digest and approver that fit together. The digest is
 * checked by {@link verifyDecisionDigest}, not here. Runs no user code.
 */
export function isPolicyDecision(value: unknown): value is PolicyDecision {
  const d = exactRecord(value, DECISION_KEYS);
  return (
    d !== null &&
    d.schema_version === DECISION_SCHEMA_VERSION &&
    hasCommonShape(d) &&
    subjectDigestFits(d.operation, d.subject, d.subject_digest) &&
    approverFits(d.operation, d.approved_by)
  );
}

/** A record of an earlier release: `schema_version` 1, without `subject_digest` and `approved_by`. */
function isSchemaOneDecision(value: unknown): boolean {
  const d = exactRecord(value, DECISION_KEYS_V1);
  return d !== null && d.schema_version === 1 && hasCommonShape(d);
}

/** `subject_digest` is set exactly for an undeclared tool name, recorded as `'unknown_tool'`. */
function subjectDigestFits(operation: unknown, subject: unknown, digest: unknown): boolean {
  if (digest === null) return true;
  return operation === 'tool_call' && subject === UNKNOWN_TOOL_SUBJECT && typeof digest === 'string' && NAME_DIGEST.test(digest);
}

/** `approved_by` is `null` or a principal id, and only a tool call is ever approved. */
function approverFits(operation: unknown, approver: unknown): boolean {
  return approver === null || (operation === 'tool_call' && isValidId(approver));
}

/** The checks every schema version shares. */
function hasCommonShape(d: Record<(typeof DECISION_KEYS_V1)[number], unknown>): boolean {
  const budget = exactRecord(d.budget, BUDGET_KEYS);
  if (budget === null || !isOperation(d.operation)) return false;
  const { kind, reasons } = REASONS_BY_OPERATION[d.operation];
  const limit = budget.limit_bytes;
  const measured = budget.measured_bytes;
  if (!isSafeIntegerAtLeast(limit, 0) || budget.kind !== kind) return false;
  if (typeof d.reason !== 'string' || !reasons.has(d.reason)) return false;
  const measuredFits =
    d.reason === 'allowed'
      ? isSafeIntegerAtLeast(measured, 0) && measured <= limit
      : d.reason.endsWith('_budget_exceeded')
        ? isSafeIntegerAtLeast(measured, 0) && measured > limit
        : measured === null;
  return (
    measuredFits &&
    typeof d.decision_id === 'string' &&
    DECISION_ID.test(d.decision_id) &&
    Number.isSafeInteger(d.decided_at_ms) &&
    isValidId(d.policy_id, MAX_POLICY_ID_BYTES) &&
    typeof d.policy_fingerprint === 'string' &&
    SHA256_HEX.test(d.policy_fingerprint) &&
    isValidSubject(d.subject) &&
    d.outcome === (d.reason === 'allowed' ? 'allow' : 'deny') &&
    typeof d.decision_digest === 'string' &&
    SHA256_HEX.test(d.decision_digest)
  );
}

/**
 * Recomputes `decision_digest`: true when `decision` is a decision record ({@link isPolicyDecision},
 * or a `schema_version` 1 record an earlier release wrote, without `subject_digest` and `approved_by`) whose digest
 * equals the SHA-256 of the canonical JSON of the record without that key. False for anything else;
 * never throws and runs no user code. A digest detects corruption of one decision; it proves nothing
 * about who wrote it.
 */
export function verifyDecisionDigest(decision: unknown): boolean {
  if (!isPolicyDecision(decision) && !isSchemaOneDecision(decision)) return false;
  // a validated record holds only own data properties, so plain reads run no user code
  const { decision_digest: digest, budget, ...rest } = decision as PolicyDecision;
  const record = { ...rest, budget: { kind: budget.kind, measured_bytes: budget.measured_bytes, limit_bytes: budget.limit_bytes } };
  return sha256Hex(canonicalJson(record)) === digest;
}

/**
 * The frozen summary `{decision_id, policy_id, operation, outcome, reason}` used in errors, HTTP
 * bodies and model-visible denials. Throws `invalid_runtime_policy_audit_event` for a value that
 * is not a decision record.
 */
export function summarizeDecision(decision: PolicyDecision): PolicyDecisionSummary {
  if (!isPolicyDecision(decision)) throw new RuntimePolicyError('invalid_runtime_policy_audit_event');
  return Object.freeze({
    decision_id: decision.decision_id,
    policy_id: decision.policy_id,
    operation: decision.operation,
    outcome: decision.outcome,
    reason: decision.reason,
  });
}

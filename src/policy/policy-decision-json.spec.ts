import fc from 'fast-check';
import { canonicalJson } from '../json';
import { buildDecision, canonicalRecordJson, type DecisionFacts } from './policy-decision';
import { sha256Hex } from '../shared/text/sha256';
import type { PolicyOutcome } from './runtime-policy.types';
import { POLICY_REASONS } from './testing/decision-fixtures';

/** The record of spec 02 §5 without its digest, as canonicalJson would be given it. */
function recordOf(facts: DecisionFacts, decisionId: string, decidedAt: number, outcome: PolicyOutcome) {
  return {
    schema_version: 2,
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
    budget: { kind: facts.budgetKind, measured_bytes: facts.measuredBytes, limit_bytes: facts.limitBytes },
  };
}

const wellFormed = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });
const tricky = fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '😀', '<invalid>', 'a"b\\c\r');
const name = fc.oneof(wellFormed, tricky, fc.array(tricky, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('')));
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const hex16 = fc.stringMatching(/^[0-9a-f]{16}$/);
const safeInteger = fc.oneof(fc.constantFrom(0, -0, 1, 2 ** 31, Number.MAX_SAFE_INTEGER), fc.maxSafeNat());

const facts: fc.Arbitrary<DecisionFacts> = fc.record({
  policyId: name,
  policyFingerprint: hex64,
  operation: fc.constantFrom('agent_invocation', 'tool_call', 'content'),
  subject: name,
  subjectDigest: fc.option(hex16, { nil: null }),
  approvedBy: fc.option(name, { nil: null }),
  reason: fc.constantFrom(...POLICY_REASONS),
  budgetKind: fc.constantFrom('arguments', 'content'),
  measuredBytes: fc.option(safeInteger, { nil: null }),
  limitBytes: safeInteger,
});

describe('canonicalRecordJson', () => {
  it('equals canonicalJson of the record for any facts, names needing escapes included', () => {
    fc.assert(
      fc.property(facts, fc.uuid({ version: 7 }), fc.oneof(safeInteger, fc.integer({ min: -(2 ** 40), max: 0 })), fc.constantFrom<PolicyOutcome>('allow', 'deny'), (f, uuid, at, outcome) => {
        const id = `decision-${uuid}`;
        expect(canonicalRecordJson(f, id, at, outcome)).toBe(canonicalJson(recordOf(f, id, at, outcome)));
      }),
      { numRuns: 500 },
    );
  });

  it('gives buildDecision the digest of canonicalJson of its record', () => {
    fc.assert(
      fc.property(facts, fc.integer({ min: 0, max: 2 ** 47 }), (f, at) => {
        const d = buildDecision(f, { wallNow: () => at, now: () => 0 } as never);
        const { decision_digest: digest, ...rest } = d;
        expect(digest).toBe(sha256Hex(canonicalJson(rest)));
        expect(Object.keys(d)).toEqual([...Object.keys(recordOf(f, d.decision_id, at, d.outcome)), 'decision_digest']);
        expect(Object.isFrozen(d) && Object.isFrozen(d.budget)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

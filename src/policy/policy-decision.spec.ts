import { systemClock, type Clock } from '../shared/time/clock';
import { sha256Hex } from '../shared/text/sha256';
import { canonicalJson } from '../json';
import { isPolicyDecision, summarizeDecision, verifyDecisionDigest } from './policy-decision';
import { RuntimePolicy } from './runtime-policy';
import type { PolicyDecision } from './runtime-policy.types';
import { DECISION_KEYS, POLICY_REASONS } from './testing/decision-fixtures';

const DECISION_ID = /^decision-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const clockAt = (wall: () => number): Clock => ({ ...systemClock, wallNow: wall });

const policy = RuntimePolicy.compile({
  id: 'decisions',
  agents: { allow: ['a'] },
  tools: { allow: ['t'], deny: ['x'] },
  maxArgumentBytes: 10,
  maxContentBytes: 10,
});

/** One decision of every reason. */
function decisionsOfEveryReason(): PolicyDecision[] {
  const failing = [0];
  Object.defineProperty(failing, 0, { get: () => { throw new Error('x'); } });
  return [
    policy.checkTool('t', 1),
    policy.checkTool('u', 1),
    policy.checkTool('x', 1),
    policy.checkTool('t', 'x'.repeat(20)),
    policy.checkAgent('a', 'x'.repeat(20)),
    policy.checkTool('t', NaN),
    policy.checkContent('c', '\ud800'),
    policy.checkContent('', ''),
    policy.checkTool.call({}, 't', 1),
    policy.checkTool('t', failing),
  ];
}

/** A plain, mutable copy of a decision (budget included). */
const copyOf = (d: PolicyDecision): Record<string, unknown> => ({ ...d, budget: { ...d.budget } });

describe('§5 decision record', () => {
  const decisions = decisionsOfEveryReason();

  it('covers every reason of the table', () => {
    expect(decisions.map((d) => d.reason).sort()).toEqual([...POLICY_REASONS].sort());
  });

  it('has exactly the keys of the spec, and budget exactly kind, measured_bytes, limit_bytes', () => {
    for (const d of decisions) {
      expect(Reflect.ownKeys(d).sort()).toEqual(DECISION_KEYS);
      expect(Reflect.ownKeys(d.budget).sort()).toEqual(['kind', 'limit_bytes', 'measured_bytes']);
      expect(d.schema_version).toBe(2);
      expect(d.subject_digest).toBeNull();
    }
  });

  it('is made of deep-frozen plain objects that survive a JSON round trip unchanged', () => {
    for (const d of decisions) {
      expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(d.budget)).toBe(Object.prototype);
      expect(Object.isFrozen(d)).toBe(true);
      expect(Object.isFrozen(d.budget)).toBe(true);
      expect(JSON.parse(JSON.stringify(d))).toStrictEqual(d);
    }
  });

  it('gives allow only with reason allowed, and deny otherwise', () => {
    for (const d of decisions) expect(d.outcome).toBe(d.reason === 'allowed' ? 'allow' : 'deny');
  });

  it('has measured_bytes exact for allowed, above the limit for budget denials, null otherwise', () => {
    for (const d of decisions) {
      const { measured_bytes: measured, limit_bytes: limit } = d.budget;
      if (d.reason === 'allowed') expect(measured).toBe(1);
      else if (d.reason.endsWith('_budget_exceeded')) expect(measured).toBeGreaterThan(limit);
      else expect(measured).toBeNull();
    }
  });

  it('carries the policy id and fingerprint', () => {
    expect(policy.checkTool('t', 1)).toMatchObject({ policy_id: 'decisions', policy_fingerprint: policy.fingerprint });
  });

  describe('decision_id', () => {
    it('is "decision-" and a lowercase UUIDv7', () => {
      for (const d of decisions) expect(d.decision_id).toMatch(DECISION_ID);
    });

    it('is unique and increasing in issue order within one millisecond', () => {
      const frozen = policy.withDeps({ clock: clockAt(() => 1_800_000_000_000) });
      const ids = Array.from({ length: 5_000 }, () => frozen.checkContent('c', '').decision_id);
      expect(new Set(ids).size).toBe(ids.length);
      for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    });

    it('keeps increasing when the wall clock steps back', () => {
      let now = 1_900_000_000_000;
      const stepping = policy.withDeps({ clock: clockAt(() => now) });
      const first = stepping.checkContent('c', '').decision_id;
      now -= 60_000;
      const second = stepping.checkContent('c', '').decision_id;
      expect(second > first).toBe(true);
    });

    it('is increasing across policies and across the invalid-policy path', () => {
      const ids = [
        policy.checkTool('t', 1).decision_id,
        RuntimePolicy.compile({}).checkTool('t', 1).decision_id,
        policy.checkTool.call({}, 't', 1).decision_id,
        policy.checkAgent('a', '').decision_id,
      ];
      expect([...ids].sort()).toEqual(ids);
    });
  });

  describe('decided_at_ms', () => {
    it('is the integer wall-clock time of the clock', () => {
      expect(policy.withDeps({ clock: clockAt(() => 1_234.9) }).checkTool('t', 1).decided_at_ms).toBe(1_234);
      const before = Date.now();
      const at = policy.checkTool('t', 1).decided_at_ms;
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(Date.now());
    });

    it('falls back to Date.now() when the clock throws or gives a non-finite time, and still decides', () => {
      for (const wall of [() => { throw new Error('clock'); }, () => NaN, () => Infinity, () => 'soon' as unknown as number]) {
        const before = Date.now();
        const d = policy.withDeps({ clock: clockAt(wall) }).checkTool('t', 1);
        expect(d.reason).toBe('allowed');
        expect(d.decided_at_ms).toBeGreaterThanOrEqual(before);
        expect(Number.isSafeInteger(d.decided_at_ms)).toBe(true);
      }
    });
  });

  describe('decision_digest', () => {
    it('is the lowercase hex SHA-256 of the canonical JSON of the record without it', () => {
      for (const d of decisions) {
        const { decision_digest: digest, ...rest } = d;
        expect(digest).toBe(sha256Hex(canonicalJson(rest)));
        expect(verifyDecisionDigest(d)).toBe(true);
      }
    });

    it('changes, and stops verifying, when any field changes', () => {
      const d = policy.checkTool('t', 1);
      const changes: Array<[string, (r: Record<string, unknown>) => void]> = [
        ['schema_version', (r) => (r.schema_version = 3)],
        ['decision_id', (r) => (r.decision_id = String(r.decision_id).replace(/.$/, (c) => (c === '0' ? '1' : '0')))],
        ['decided_at_ms', (r) => (r.decided_at_ms = (r.decided_at_ms as number) + 1)],
        ['policy_id', (r) => (r.policy_id = 'other')],
        ['policy_fingerprint', (r) => (r.policy_fingerprint = '0'.repeat(64))],
        ['operation', (r) => (r.operation = 'content')],
        ['subject', (r) => (r.subject = 'u')],
        ['subject_digest', (r) => ((r.subject = 'unknown_tool'), (r.subject_digest = '0'.repeat(16)))],
        ['outcome', (r) => (r.outcome = 'deny')],
        ['reason', (r) => (r.reason = 'not_allowed')],
        ['budget.kind', (r) => ((r.budget as Record<string, unknown>).kind = 'content')],
        ['budget.measured_bytes', (r) => ((r.budget as Record<string, unknown>).measured_bytes = 2)],
        ['budget.limit_bytes', (r) => ((r.budget as Record<string, unknown>).limit_bytes = 11)],
      ];
      const digests = new Set<string>([d.decision_digest]);
      for (const [, change] of changes) {
        const copy = copyOf(d);
        change(copy);
        expect(verifyDecisionDigest(copy)).toBe(false);
        const { decision_digest: _, ...rest } = copy;
        digests.add(sha256Hex(canonicalJson(rest)));
      }
      expect(digests.size).toBe(changes.length + 1);
      const tampered = { ...copyOf(d), decision_digest: d.decision_digest.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) };
      expect(verifyDecisionDigest(tampered)).toBe(false);
    });

    it('verifies a decision read back from JSON', () => {
      const d = policy.checkAgent('a', 'hi');
      expect(verifyDecisionDigest(JSON.parse(JSON.stringify(d)))).toBe(true);
    });

    it('verifyDecisionDigest is false for anything that cannot be recomputed, without running a getter', () => {
      const d = policy.checkTool('t', 1);
      const getter = jest.fn(() => 1);
      const withGetter = Object.defineProperty(copyOf(d), 'extra', { get: getter, enumerable: true });
      for (const value of [null, undefined, 'x', [], { ...d, decision_digest: 5 }, { ...d, extra: NaN }, withGetter, new Proxy(d, {})]) {
        expect(verifyDecisionDigest(value)).toBe(false);
      }
      expect(getter).not.toHaveBeenCalled();
    });
  });

  describe('summarizeDecision', () => {
    it('gives the frozen {decision_id, policy_id, operation, outcome, reason}', () => {
      const d = policy.checkTool('x', { secret: 1 });
      const summary = summarizeDecision(d);
      expect(summary).toEqual({
        decision_id: d.decision_id,
        policy_id: 'decisions',
        operation: 'tool_call',
        outcome: 'deny',
        reason: 'explicitly_denied',
      });
      expect(Object.isFrozen(summary)).toBe(true);
    });

    it('refuses a value that is not a decision record with invalid_runtime_policy_audit_event', () => {
      for (const value of [null, {}, { ...policy.checkTool('t', 1), extra: 1 }]) {
        expect(() => summarizeDecision(value as PolicyDecision)).toThrow(
          expect.objectContaining({ code: 'invalid_runtime_policy_audit_event' }),
        );
      }
    });
  });

  describe('isPolicyDecision', () => {
    it('accepts every decision a check returns, and their JSON copies', () => {
      for (const d of decisions) {
        expect(isPolicyDecision(d)).toBe(true);
        expect(isPolicyDecision(JSON.parse(JSON.stringify(d)))).toBe(true);
      }
    });

    it('refuses extra or missing keys, wrong types and inconsistent fields', () => {
      const d = policy.checkTool('t', 1);
      const variants: Array<Record<string, unknown>> = [
        { ...copyOf(d), extra: 1 },
        (({ subject: _, ...rest }) => rest)(copyOf(d)),
        { ...copyOf(d), schema_version: '1' },
        { ...copyOf(d), decision_id: 'decision-not-a-uuid' },
        { ...copyOf(d), decided_at_ms: 1.5 },
        { ...copyOf(d), policy_fingerprint: 'ABC' },
        { ...copyOf(d), subject: '' },
        { ...copyOf(d), outcome: 'deny' },
        { ...copyOf(d), reason: 'content_budget_exceeded' },
        { ...copyOf(d), operation: 'content' },
        { ...copyOf(d), budget: { ...d.budget, measured_bytes: null } },
        { ...copyOf(d), budget: { ...d.budget, measured_bytes: 11 } },
        { ...copyOf(d), budget: { ...d.budget, extra: 1 } },
        { ...copyOf(d), decision_digest: 'x' },
        (({ subject_digest: _, ...rest }) => rest)(copyOf(d)),
        { ...copyOf(d), schema_version: 1 },
        { ...copyOf(d), subject_digest: '0'.repeat(16) },
        { ...copyOf(d), subject: 'unknown_tool', subject_digest: '0'.repeat(64) },
        { ...copyOf(d), subject: 'unknown_tool', subject_digest: 'ABCDEF0123456789' },
        (({ approved_by: _, ...rest }) => rest)(copyOf(d)),
        { ...copyOf(d), approved_by: '' },
        { ...copyOf(d), approved_by: 1 },
      ];
      for (const variant of variants) expect(isPolicyDecision(variant)).toBe(false);
      expect(isPolicyDecision(new Proxy(d, {}))).toBe(false);
    });
  });

  it('never holds arguments, content or exception text', () => {
    const failing = [0];
    Object.defineProperty(failing, 0, { get: () => { throw new Error('EXCEPTION-TEXT'); } });
    const texts = [
      policy.checkTool('t', { k: 'ARGUMENT-TEXT' }),
      policy.checkTool('t', ['ARGUMENT-TEXT'.repeat(5)]),
      policy.checkAgent('a', 'CONTENT-TEXT'),
      policy.checkContent('c', 'CONTENT-TEXT'.repeat(3)),
      policy.checkTool('t', failing),
    ].map((d) => JSON.stringify(d));
    for (const text of texts) expect(text).not.toMatch(/ARGUMENT-TEXT|CONTENT-TEXT|EXCEPTION-TEXT/);
  });
});

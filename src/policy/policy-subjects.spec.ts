import { sha256Hex } from '../shared/text/sha256';
import { canonicalJson } from '../json';
import { isPolicyDecision, summarizeDecision, verifyDecisionDigest } from './policy-decision';
import { RuntimePolicy } from './runtime-policy';
import type { PolicyDecision } from './runtime-policy.types';

const CANARY = 'user ssn 123-45-6789';
const digestOf = (name: string): string => sha256Hex(name).slice(0, 16);

const policy = RuntimePolicy.compile({
  id: 'subjects',
  agents: { allow: ['helper'] },
  tools: { allow: ['search', CANARY], deny: ['shell'] },
  maxArgumentBytes: 10,
});

/** A record as a release before `subject_digest` and `approved_by` wrote it: schema 1, its digest over those keys. */
function schemaOneRecord(decision: PolicyDecision): Record<string, unknown> {
  const { decision_digest: _digest, subject_digest: _subjectDigest, approved_by: _approvedBy, ...rest } = decision;
  const record = { ...rest, schema_version: 1 };
  return { ...record, decision_digest: sha256Hex(canonicalJson(record)) };
}

describe('Subjects: a tool name the caller did not declare is never recorded', () => {
  it('checkUndeclaredTool records unknown_tool and the SHA-256 prefix of the name, judged by the same rules', () => {
    const denied = policy.checkUndeclaredTool('ghost', {});
    expect(denied).toMatchObject({ schema_version: 2, operation: 'tool_call', subject: 'unknown_tool', subject_digest: digestOf('ghost'), outcome: 'deny', reason: 'not_allowed' });
    expect(policy.checkUndeclaredTool('shell', {})).toMatchObject({ subject: 'unknown_tool', subject_digest: digestOf('shell'), reason: 'explicitly_denied' });
    expect(policy.checkUndeclaredTool('search', { q: 'x'.repeat(20) })).toMatchObject({ subject: 'unknown_tool', reason: 'argument_budget_exceeded' });
    expect(policy.checkUndeclaredTool('search', {})).toMatchObject({ subject: 'unknown_tool', outcome: 'allow', reason: 'allowed' });
    // the digest is of the UTF-8 bytes: the same name gives the same digest, another name another one
    expect(policy.checkUndeclaredTool('ghost', {}).subject_digest).toBe(denied.subject_digest);
    expect(policy.checkUndeclaredTool('ghosT', {}).subject_digest).not.toBe(denied.subject_digest);
    expect(policy.checkUndeclaredTool('café', {}).subject_digest).toBe(sha256Hex(Buffer.from('café', 'utf8')).slice(0, 16));
    for (const decision of [denied, policy.checkUndeclaredTool('search', {})]) {
      expect(isPolicyDecision(decision)).toBe(true);
      expect(verifyDecisionDigest(decision)).toBe(true);
      expect(summarizeDecision(decision)).toEqual({ decision_id: decision.decision_id, policy_id: 'subjects', operation: 'tool_call', outcome: decision.outcome, reason: decision.reason });
    }
  });

  it('a made-up name appears nowhere in the decision, even one the policy allows', () => {
    const decision = policy.checkUndeclaredTool(CANARY, {});
    expect(decision).toMatchObject({ subject: 'unknown_tool', outcome: 'allow' });
    expect(JSON.stringify(decision)).not.toContain('123-45-6789');
  });

  it('a declared name, allowed or denied, keeps its name and has no digest', () => {
    expect(policy.checkTool('shell', {})).toMatchObject({ subject: 'shell', subject_digest: null, reason: 'explicitly_denied' });
    expect(policy.checkTool('ghost', {})).toMatchObject({ subject: 'ghost', subject_digest: null, reason: 'not_allowed' });
    expect(policy.checkAgent('helper', 'hi')).toMatchObject({ subject: 'helper', subject_digest: null });
    expect(policy.checkContent('tool_result', 'x')).toMatchObject({ subject: 'tool_result', subject_digest: null });
  });

  it('a value that is no valid name stays <invalid> without a digest; a foreign receiver still hides the name', () => {
    for (const name of ['', 'a\u0000b', 'x'.repeat(257), 42]) {
      expect(policy.checkUndeclaredTool(name, {})).toMatchObject({ subject: '<invalid>', subject_digest: null, reason: 'invalid_subject' });
    }
    const detached = policy.checkUndeclaredTool.bind({});
    expect(detached('ghost', {})).toMatchObject({ subject: 'unknown_tool', subject_digest: digestOf('ghost'), reason: 'invalid_policy', policy_id: 'invalid-policy' });
    expect(verifyDecisionDigest(detached('ghost', {}))).toBe(true);
  });

  it('emits the same content-free telemetry as checkTool', () => {
    const payloads: object[] = [];
    const observed = policy.withDeps({ events: { emit: (_event: string, payload: object) => void payloads.push(payload) } });
    observed.checkUndeclaredTool('ghost', {});
    observed.checkTool('ghost', {});
    expect(payloads[0]).toEqual(payloads[1]);
    expect(JSON.stringify(payloads)).not.toContain('ghost');
  });
});

describe('schema_version', () => {
  it('a schema 1 record of an earlier release still verifies, though it is no longer built', () => {
    const record = schemaOneRecord(policy.checkTool('shell', {}));
    expect(verifyDecisionDigest(record)).toBe(true);
    expect(verifyDecisionDigest(JSON.parse(canonicalJson(record)))).toBe(true);
    expect(isPolicyDecision(record)).toBe(false);
    expect(verifyDecisionDigest({ ...record, subject: 'search' })).toBe(false);
    // schema 1 has no subject_digest, schema 2 requires it
    expect(verifyDecisionDigest({ ...record, subject_digest: null })).toBe(false);
    expect(verifyDecisionDigest({ ...record, schema_version: 2 })).toBe(false);
  });

  it('subject_digest is refused beside any subject but unknown_tool of a tool call', () => {
    const agent = { ...policy.checkAgent('stranger', 'hi'), budget: { ...policy.checkAgent('stranger', 'hi').budget } };
    expect(isPolicyDecision({ ...agent, subject: 'unknown_tool', subject_digest: digestOf('x') })).toBe(false);
    expect(isPolicyDecision({ ...agent, subject: 'unknown_tool' })).toBe(true);
  });
});

import { canonicalJson } from '../json';
import { sha256Hex } from '../shared/text/sha256';
import { isPolicyDecision, verifyDecisionDigest } from './policy-decision';
import { RuntimePolicy, screenCheck } from './runtime-policy';

const policy = RuntimePolicy.compile({ id: 'approvals', agents: { allow: ['helper'] }, tools: { allow: ['deploy'], deny: ['shell'] } });

/** The same record with `changes` applied and its digest recomputed, so only the shape checks can refuse it. */
function redigested(decision: object, changes: Record<string, unknown>): Record<string, unknown> {
  const { decision_digest: _digest, ...rest } = { ...decision, ...changes } as Record<string, unknown>;
  return { ...rest, decision_digest: sha256Hex(canonicalJson(rest)) };
}

describe('approved_by: the approver of a confirmed tool call', () => {
  it('checkTool records the approver id it is given, in the digest; without one it is null', () => {
    const approved = policy.checkTool('deploy', { target: 'prod' }, 'operator');
    expect(approved).toMatchObject({ schema_version: 2, operation: 'tool_call', subject: 'deploy', outcome: 'allow', approved_by: 'operator' });
    expect(isPolicyDecision(approved)).toBe(true);
    expect(verifyDecisionDigest(approved)).toBe(true);
    expect(verifyDecisionDigest({ ...approved, approved_by: 'mallory' })).toBe(false);
    expect(verifyDecisionDigest({ ...approved, approved_by: null })).toBe(false);

    expect(policy.checkTool('deploy', {}).approved_by).toBeNull();
    expect(policy.checkAgent('helper', 'hi').approved_by).toBeNull();
    expect(policy.checkContent('model_output', 'hi').approved_by).toBeNull();
  });

  it('an approver that is not a valid id is recorded as null, and the check still decides', () => {
    for (const bad of ['', 'a\u0000b', 'x'.repeat(300), 42 as unknown as string]) {
      const decision = policy.checkTool('shell', {}, bad);
      expect(decision).toMatchObject({ outcome: 'deny', reason: 'explicitly_denied', approved_by: null });
    }
  });

  it('a denied re-check through screenCheck carries the approver; other checks never do', () => {
    expect(screenCheck(policy, 'tool', 'shell', {}, 'operator')).toMatchObject({ outcome: 'deny', approved_by: 'operator' });
    expect(screenCheck(policy, 'tool', 'deploy', {}, 'operator')).toBeNull();
    expect(screenCheck(policy, 'agent', 'stranger', 'hi', 'operator')).toMatchObject({ outcome: 'deny', approved_by: null });
    expect(screenCheck(policy, 'undeclared_tool', 'ghost', {}, 'operator')).toMatchObject({ subject: 'unknown_tool', approved_by: null });
  });

  it('a schema 2 record without approved_by, with an invalid one, or with one on a non-tool decision is refused', () => {
    const approved = policy.checkTool('deploy', {}, 'operator');
    const { approved_by: _approver, ...withoutKey } = approved;
    expect(verifyDecisionDigest(redigested(withoutKey, {}))).toBe(false);
    expect(verifyDecisionDigest(redigested(approved, { approved_by: 'a\u0000b' }))).toBe(false);
    expect(verifyDecisionDigest(redigested(approved, { approved_by: 7 }))).toBe(false);
    expect(verifyDecisionDigest(redigested(approved, { approved_by: 'bob' }))).toBe(true);
    const agent = policy.checkAgent('helper', 'hi');
    expect(verifyDecisionDigest(redigested(agent, { approved_by: 'operator' }))).toBe(false);
  });
});

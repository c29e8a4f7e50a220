import type { Clock } from '../shared/time/clock';
import { systemClock } from '../shared/time/clock';
import { sha256Hex } from '../shared/text/sha256';
import { TelemetryEvents } from '../telemetry/telemetry-events';
import { RuntimePolicy } from './runtime-policy';
import { RuntimePolicyError } from './runtime-policy.errors';
import type { PolicyDecision, PolicyDecisionEvent } from './runtime-policy.types';

const INVALID_FINGERPRINT = sha256Hex('{"status":"invalid"}');

/** An object whose every property read is counted; reading it is what a denied check must not do. */
function tripwire(): { value: object; reads: () => number } {
  let reads = 0;
  const handler = new Proxy({}, { get: () => () => { reads++; throw new Error('trap ran'); } });
  const proxy = new Proxy({ a: 1 }, handler);
  const object = { nested: 1 };
  Object.defineProperty(object, 'secret', { enumerable: true, get: () => { reads++; return 'x'; } });
  const array = [1];
  Object.defineProperty(array, 0, { enumerable: true, get: () => { reads++; return 1; } });
  return { value: [proxy, object, array], reads: () => reads };
}

function recordingSink() {
  const events: Array<[string, PolicyDecisionEvent]> = [];
  return { sink: { emit: (name: string, payload: object) => events.push([name, payload as PolicyDecisionEvent]) }, events };
}

const policy = RuntimePolicy.compile({
  id: 'checks',
  agents: { allow: ['support', 'both'], deny: ['banned', 'both'] },
  tools: { allow: ['search', 'both'], deny: ['rm', 'both'] },
  maxArgumentBytes: 20,
  maxContentBytes: 30,
});

describe('§4 checks: operation, rules, budget and measurement per method', () => {
  it('checkAgent is agent_invocation against agents and maxContentBytes, measured as content', () => {
    const d = policy.checkAgent('support', 'é'.repeat(15));
    expect(d).toMatchObject({ operation: 'agent_invocation', subject: 'support', outcome: 'allow', reason: 'allowed' });
    expect(d.budget).toEqual({ kind: 'content', measured_bytes: 30, limit_bytes: 30 });
  });

  it('checkTool is tool_call against tools and maxArgumentBytes, measured as canonical JSON', () => {
    const d = policy.checkTool('search', 'abc');
    expect(d).toMatchObject({ operation: 'tool_call', subject: 'search', outcome: 'allow', reason: 'allowed' });
    expect(d.budget).toEqual({ kind: 'arguments', measured_bytes: 5, limit_bytes: 20 });
    expect(policy.checkTool('search', {}).budget.measured_bytes).toBe(2);
  });

  it('checkContent is content with no allow-list, against maxContentBytes', () => {
    const d = policy.checkContent('model_output', 'hello');
    expect(d).toMatchObject({ operation: 'content', subject: 'model_output', outcome: 'allow', reason: 'allowed' });
    expect(d.budget).toEqual({ kind: 'content', measured_bytes: 5, limit_bytes: 30 });
    expect(policy.checkContent('banned', 'x').reason).toBe('allowed');
  });
});

describe('§4 step 1: the receiver must be a compiled policy', () => {
  const lookAlike = { ...policy, id: 'checks', fingerprint: policy.fingerprint };
  const receivers: Array<[string, unknown]> = [
    ['undefined (a detached method)', undefined],
    ['a look-alike object', lookAlike],
    ['an object inheriting from a policy', Object.create(policy)],
    ['a Proxy of a policy', new Proxy(policy, {})],
  ];

  it.each(receivers)('denies invalid_policy for %s', (_, receiver) => {
    const checks: Array<[PolicyDecision, string, string]> = [
      [policy.checkAgent.call(receiver, 'support', 'x'), 'agent_invocation', 'content'],
      [policy.checkTool.call(receiver, 'search', {}), 'tool_call', 'arguments'],
      [policy.checkContent.call(receiver, 'model_output', 'x'), 'content', 'content'],
    ];
    for (const [d, operation, kind] of checks) {
      expect(d).toMatchObject({
        policy_id: 'invalid-policy',
        policy_fingerprint: INVALID_FINGERPRINT,
        operation,
        outcome: 'deny',
        reason: 'invalid_policy',
      });
      expect(d.budget).toEqual({ kind, measured_bytes: null, limit_bytes: 0 });
    }
  });

  it('keeps a valid subject and writes "<invalid>" for an invalid one', () => {
    const { checkTool } = policy;
    expect(checkTool('search', {}).subject).toBe('search');
    expect(checkTool('', {}).subject).toBe('<invalid>');
    expect(checkTool(42, {}).subject).toBe('<invalid>');
  });

  it('never reads the value', () => {
    const { value, reads } = tripwire();
    policy.checkTool.call({}, 'search', value);
    policy.checkAgent.call({}, 'support', value);
    policy.checkContent.call({}, 'x', value);
    expect(reads()).toBe(0);
  });
});

describe('§4 step 2: the subject must be a well-formed name of 1..256 UTF-8 bytes', () => {
  const bad: Array<[string, unknown]> = [
    ['empty', ''],
    ['257 UTF-8 bytes', 'é'.repeat(128) + 'x'],
    ['a lone surrogate', 'a\ud800'],
    ['a number', 1],
    ['a boxed string', Object('search')],
    ['undefined', undefined],
    ['a Proxy', new Proxy({}, {})],
  ];

  it.each(bad)('denies invalid_subject for a subject that is %s, with the applicable limit', (_, subject) => {
    expect(policy.checkTool(subject, {})).toMatchObject({ subject: '<invalid>', reason: 'invalid_subject', outcome: 'deny' });
    expect(policy.checkTool(subject, {}).budget).toEqual({ kind: 'arguments', measured_bytes: null, limit_bytes: 20 });
    expect(policy.checkAgent(subject, '').budget).toEqual({ kind: 'content', measured_bytes: null, limit_bytes: 30 });
    expect(policy.checkContent(subject, '').reason).toBe('invalid_subject');
  });

  it('accepts a subject of exactly 256 UTF-8 bytes', () => {
    expect(policy.checkContent('é'.repeat(128), '').reason).toBe('allowed');
  });

  it('never reads the value of an invalid subject', () => {
    const { value, reads } = tripwire();
    policy.checkTool('', value);
    policy.checkContent(7, value);
    expect(reads()).toBe(0);
  });
});

describe('§4 step 3: authorisation (deny beats allow, fail closed)', () => {
  it('denies explicitly_denied when the subject is in deny, even when also allowed', () => {
    expect(policy.checkTool('rm', {}).reason).toBe('explicitly_denied');
    expect(policy.checkTool('both', {}).reason).toBe('explicitly_denied');
    expect(policy.checkAgent('banned', '').reason).toBe('explicitly_denied');
    expect(policy.checkAgent('both', '').reason).toBe('explicitly_denied');
  });

  it('denies not_allowed when the subject is in no allow selector', () => {
    const d = policy.checkTool('shell', {});
    expect(d).toMatchObject({ outcome: 'deny', reason: 'not_allowed', subject: 'shell' });
    expect(d.budget.measured_bytes).toBeNull();
    expect(policy.checkAgent('stranger', '').reason).toBe('not_allowed');
  });

  it('matches names by exact string equality', () => {
    expect(policy.checkTool('Search', {}).reason).toBe('not_allowed');
    expect(policy.checkTool('search ', {}).reason).toBe('not_allowed');
  });

  it('deny: "all" denies every subject and beats allow: "all"', () => {
    const closed = RuntimePolicy.compile({ tools: { allow: 'all', deny: 'all' }, agents: { allow: 'all', deny: 'all' } });
    expect(closed.checkTool('anything', {}).reason).toBe('explicitly_denied');
    expect(closed.checkAgent('anyone', '').reason).toBe('explicitly_denied');
  });

  it('allow: "all" lets every subject not denied through', () => {
    const open = RuntimePolicy.compile({ tools: { allow: 'all', deny: ['rm'] } });
    expect(open.checkTool('anything', {}).reason).toBe('allowed');
    expect(open.checkTool('rm', {}).reason).toBe('explicitly_denied');
  });

  it('never reads the value of a denied subject: no getter, no Proxy trap', () => {
    const { value, reads } = tripwire();
    expect(policy.checkTool('rm', value).reason).toBe('explicitly_denied');
    expect(policy.checkTool('shell', value).reason).toBe('not_allowed');
    expect(policy.checkAgent('banned', value).reason).toBe('explicitly_denied');
    expect(policy.checkAgent('stranger', value).reason).toBe('not_allowed');
    expect(reads()).toBe(0);
  });
});

describe('§4 step 4: budget', () => {
  it('allows at the limit (inclusive) and denies one byte above it with the measured size', () => {
    const at = policy.checkTool('search', 'x'.repeat(18));
    expect(at).toMatchObject({ outcome: 'allow', reason: 'allowed' });
    expect(at.budget.measured_bytes).toBe(20);
    const above = policy.checkTool('search', 'x'.repeat(19));
    expect(above).toMatchObject({ outcome: 'deny', reason: 'argument_budget_exceeded' });
    expect(above.budget).toEqual({ kind: 'arguments', measured_bytes: 21, limit_bytes: 20 });
    expect(policy.checkAgent('support', 'x'.repeat(30)).reason).toBe('allowed');
    const content = policy.checkAgent('support', 'x'.repeat(31));
    expect(content.reason).toBe('content_budget_exceeded');
    expect(content.budget.measured_bytes).toBe(31);
    expect(policy.checkContent('tool_result', Buffer.alloc(31, 0x61)).reason).toBe('content_budget_exceeded');
  });

  it('reports a budget denial with measured_bytes above the limit for a 100 MiB argument', () => {
    const d = RuntimePolicy.compile({ tools: { allow: 'all' } }).checkTool('t', { blob: 'x'.repeat(100 * 2 ** 20) });
    expect(d.reason).toBe('argument_budget_exceeded');
    expect(d.budget.measured_bytes).toBeGreaterThan(65_536);
  });

  it('denies every object argument when maxArgumentBytes is below 2', () => {
    const tiny = RuntimePolicy.compile({ tools: { allow: 'all' }, maxArgumentBytes: 1 });
    expect(tiny.checkTool('t', {})).toMatchObject({ reason: 'argument_budget_exceeded', budget: { measured_bytes: 2 } });
    expect(tiny.checkTool('t', 0).reason).toBe('allowed');
  });

  it('denies invalid_arguments for tool arguments canonical JSON cannot hold, measured null', () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    for (const args of [undefined, () => 0, NaN, new Map(), new Uint8Array([97]), Buffer.from('a'), cyclic, ['\ud800'], new Proxy({}, {})]) {
      const d = policy.checkTool('search', args);
      expect(d).toMatchObject({ outcome: 'deny', reason: 'invalid_arguments' });
      expect(d.budget.measured_bytes).toBeNull();
    }
  });

  it('denies invalid_content for content that cannot be measured', () => {
    for (const content of ['\udc00', new Uint8Array([0xff]), undefined, 1n, new Date()]) {
      expect(policy.checkAgent('support', content).reason).toBe('invalid_content');
      expect(policy.checkContent('model_output', content).reason).toBe('invalid_content');
    }
  });

  it('accepts a Uint8Array of valid UTF-8 as content', () => {
    expect(policy.checkContent('model_output', Buffer.from('héllo')).budget.measured_bytes).toBe(6);
  });
});

describe('§4 step 5: other exceptions during evaluation', () => {
  it('deny policy_evaluation_failed when an array element getter throws, measured null', () => {
    const args = [1];
    Object.defineProperty(args, 0, { get: () => { throw new Error('boom CANARY'); } });
    const d = policy.checkTool('search', args);
    expect(d).toMatchObject({ outcome: 'deny', reason: 'policy_evaluation_failed', subject: 'search' });
    expect(d.budget).toEqual({ kind: 'arguments', measured_bytes: null, limit_bytes: 20 });
    expect(JSON.stringify(d)).not.toContain('CANARY');
  });

  it('does not mistake a thrown hostile value (a throwing Proxy) for anything but a failure', () => {
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); }, get: () => { throw new Error('trap'); } });
    const args = [1];
    Object.defineProperty(args, 0, { get: () => { throw hostile; } });
    expect(policy.checkTool('search', args).reason).toBe('policy_evaluation_failed');
    expect(policy.checkContent('model_output', args).reason).toBe('policy_evaluation_failed');
  });

  it('treats a RuntimePolicyError thrown by user code with another code as a failure', () => {
    const args = [1];
    Object.defineProperty(args, 0, { get: () => { throw new RuntimePolicyError('schema_mismatch'); } });
    expect(policy.checkTool('search', args).reason).toBe('policy_evaluation_failed');
  });

  it('never throws, whatever the arguments', () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const detached = new Uint8Array(new ArrayBuffer(4));
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    for (const value of [revoked.proxy, detached, Symbol('s'), { toJSON: () => { throw new Error('x'); } }]) {
      expect(() => policy.checkTool('search', value)).not.toThrow();
      expect(() => policy.checkAgent('support', value)).not.toThrow();
      expect(() => policy.checkContent('c', value)).not.toThrow();
    }
  });
});

describe('§6 telemetry: agent_runtime.policy.decision', () => {
  it('emits exactly one event per check, with the frozen content-free payload', () => {
    const { sink, events } = recordingSink();
    const bound = policy.withDeps({ events: sink });
    bound.checkTool('search', 'abc');
    bound.checkTool('rm', { secret: 'x' });
    bound.checkAgent('support', 'y'.repeat(31));
    bound.checkContent('', 'z');
    expect(events.map(([name]) => name)).toEqual(Array(4).fill('agent_runtime.policy.decision'));
    expect(TelemetryEvents.policyDecision).toBe('agent_runtime.policy.decision');
    const payloads = events.map(([, payload]) => payload);
    expect(payloads[0]).toEqual({ limit_bytes: 20, measured_bytes: 5, policy_id: 'checks', operation: 'tool_call', outcome: 'allow', reason: 'allowed' });
    expect(payloads[1]).toEqual({ limit_bytes: 20, policy_id: 'checks', operation: 'tool_call', outcome: 'deny', reason: 'explicitly_denied' });
    expect(payloads[2]).toEqual({
      limit_bytes: 30,
      measured_bytes: 31,
      policy_id: 'checks',
      operation: 'agent_invocation',
      outcome: 'deny',
      reason: 'content_budget_exceeded',
    });
    expect(payloads[3]).toEqual({ limit_bytes: 30, policy_id: 'checks', operation: 'content', outcome: 'deny', reason: 'invalid_subject' });
    expect('measured_bytes' in payloads[1]).toBe(false);
    for (const payload of payloads) expect(Object.isFrozen(payload)).toBe(true);
  });

  it('never carries the subject, the value, the digest or the decision id', () => {
    const { sink, events } = recordingSink();
    const d = policy.withDeps({ events: sink }).checkTool('search', 'CANARY');
    const text = JSON.stringify(events);
    for (const forbidden of ['search', 'CANARY', d.decision_id, d.decision_digest]) expect(text).not.toContain(forbidden);
  });

  it('is emitted after the decision is built (its clock was read first)', () => {
    const order: string[] = [];
    const clock: Clock = { ...systemClock, wallNow: () => (order.push('clock'), 5) };
    policy.withDeps({ clock, events: { emit: () => order.push('emit') } }).checkContent('c', '');
    expect(order).toEqual(['clock', 'emit']);
  });

  it('ignores a throwing sink, a rejecting sink and a sink that is not one', () => {
    const throwing = policy.withDeps({ events: { emit: () => { throw new Error('listener'); } } });
    expect(throwing.checkTool('search', 'a').reason).toBe('allowed');
    const rejecting = policy.withDeps({ events: { emit: () => Promise.reject(new Error('async listener')) } });
    expect(rejecting.checkTool('search', 'a').reason).toBe('allowed');
    const broken = policy.withDeps({ events: {} as never });
    expect(broken.checkTool('search', 'a').reason).toBe('allowed');
  });

  it('emits nothing for an invalid receiver, which has no sink', () => {
    const { sink, events } = recordingSink();
    const bound = policy.withDeps({ events: sink });
    bound.checkTool.call({}, 'search', {});
    expect(events).toHaveLength(0);
  });
});

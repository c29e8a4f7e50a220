import { verifyDecisionDigest } from '../../policy/policy-decision';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { SessionServiceDouble } from '../testing/session-service-double';
import type { NewSessionEvent, SessionRef } from '../session.types';
import { countingTool, decisionOf, drain, expectError, makeRunner, Observers, ofKind, scriptedAgent, storedEvents, USER } from '../testing/runner-harness';

/** Refuses every audit event; every other event is stored. */
class AuditRefusingSessionService extends SessionServiceDouble {
  override async appendEvent(ref: SessionRef, event: NewSessionEvent) {
    if (event.kind === 'policy_audit') throw new Error('disk full');
    return super.appendEvent(ref, event);
  }
}

const denyTools = { agents: { allow: 'all' as const }, tools: { deny: 'all' as const } };

describe('Audit events (spec 03 §6.11)', () => {
  it('each denial writes one audit event carrying the full frozen decision, before the denial record, and to the audit sink', async () => {
    const observers = new Observers();
    const onEventCallback = jest.fn(() => undefined);
    // declared tools: their names are configuration and are recorded as they are
    const tools = [countingTool('a').tool, countingTool('b').tool];
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'a', args: {} }, { id: 'c2', name: 'b', args: {} }] }, { text: 'ok' }], { tools });
    const runner = makeRunner({ agent, runtimePolicy: denyTools, auditSink: observers.auditSink, plugins: [{ name: 'events', onEventCallback }] });

    const result = await runner.run({ userId: USER, sessionId: 'ses-audit', message: 'go' });

    const events = await storedEvents(runner, 'ses-audit');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit', 'tool_response', 'policy_audit', 'tool_response', 'final_output']);
    const audits = ofKind(events, 'policy_audit');
    for (const audit of audits) {
      expect(audit).toMatchObject({ author: 'system', content: 'Runtime policy denied an operation.', invocation_id: result.invocation_id });
      expect(Object.isFrozen(decisionOf(audit))).toBe(true);
      expect(verifyDecisionDigest(decisionOf(audit))).toBe(true);
    }
    expect(audits.map((audit) => decisionOf(audit).subject)).toEqual(['a', 'b']);
    expect(observers.auditRecords).toEqual(audits.map(decisionOf));
    const kindsSeenByOnEvent = onEventCallback.mock.calls.map((call) => (call as unknown as [{ event: NewSessionEvent }])[0].event.kind);
    expect(kindsSeenByOnEvent).not.toContain('policy_audit');
  });

  it('allow decisions are not written', async () => {
    const observers = new Observers();
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'ok' }], { tools: [countingTool('echo').tool] });
    const runner = makeRunner({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } }, auditSink: observers.auditSink });

    await runner.run({ userId: USER, sessionId: 'ses-allow', message: 'go' });

    expect(ofKind(await storedEvents(runner, 'ses-allow'), 'policy_audit')).toEqual([]);
    expect(observers.auditRecords).toEqual([]);
  });

  it('a session service refusing the audit event fails the run runtime_policy_audit_persistence_failed {target: session}', async () => {
    const observers = new Observers();
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'a', args: {} }] }, { text: 'never' }]);
    const runner = makeRunner({ agent, sessionService: new AuditRefusingSessionService(), runtimePolicy: denyTools, auditSink: observers.auditSink });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-nosession', message: 'go' }));

    expectError(error, 'runtime_policy_audit_persistence_failed', { target: 'session' });
    expect(observers.auditRecords).toEqual([]);
    expect(ofKind(await storedEvents(runner, 'ses-nosession'), 'tool_response')).toEqual([]);
    expect(agent.model.calls).toHaveLength(1);
  });

  it('a session service refusing the audit of an agent denial fails the same way', async () => {
    const runner = makeRunner({ agent: scriptedAgent([]), sessionService: new AuditRefusingSessionService(), runtimePolicy: { agents: { deny: 'all' } } });

    expectError((await drain(runner.runAsync({ userId: USER, message: 'go' }))).error, 'runtime_policy_audit_persistence_failed', { target: 'session' });
  });

  it('an audit sink whose record rejects fails the run {target: audit_sink} after the session write', async () => {
    const rejected: PolicyDecision[] = [];
    const auditSink = {
      record: async (decision: PolicyDecision) => {
        rejected.push(decision);
        throw new Error('sink down');
      },
    };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'a', args: {} }] }, { text: 'never' }]);
    const runner = makeRunner({ agent, runtimePolicy: denyTools, auditSink });

    const { error, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-nosink', message: 'go' }));

    expectError(error, 'runtime_policy_audit_persistence_failed', { target: 'audit_sink' });
    const events = await storedEvents(runner, 'ses-nosink');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit']);
    expect(rejected).toEqual([decisionOf(events[2])]);
    expect(streamed.map((event) => event.kind)).toEqual(['user_message', 'model_turn']);
    expect(agent.model.calls).toHaveLength(1);
  });
});

describe('Store failures (spec 03 §4, §12)', () => {
  it('a session service failing an ordinary write fails the run session_store_failed {operation} without its text', async () => {
    class FailingModelTurns extends SessionServiceDouble {
      override async appendEvent(ref: SessionRef, event: NewSessionEvent) {
        if (event.kind === 'model_turn') throw new Error('connection reset by secret-host');
        return super.appendEvent(ref, event);
      }
    }
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'never' }], { tools: [countingTool('echo').tool] });
    const runner = makeRunner({ agent, sessionService: new FailingModelTurns() });

    const { error } = await drain(runner.runAsync({ userId: USER, message: 'go' }));

    expectError(error, 'session_store_failed', { operation: 'append_event' });
    expect((error as Error).message).not.toContain('secret-host');
  });
});

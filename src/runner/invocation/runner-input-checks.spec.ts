import type { Content } from '../content.types';
import type { RunnerPlugin } from '../agent.types';
import {
  AGENT,
  canary,
  CountingSessionService,
  decisionOf,
  drain,
  errorText,
  expectError,
  makeRunner,
  Observers,
  ofKind,
  runnerError,
  scriptedAgent,
  storedEvents,
  USER,
} from '../testing/runner-harness';

/** A plugin with every lifecycle hook counted. */
function watchingPlugin(overrides: Partial<RunnerPlugin> = {}) {
  const calls: string[] = [];
  const plugin: RunnerPlugin = {
    name: 'watch',
    onUserMessageCallback: () => void calls.push('on_user_message'),
    beforeRunCallback: () => void calls.push('before_run'),
    onEventCallback: () => void calls.push('on_event'),
    afterRunCallback: () => void calls.push('after_run'),
    onRunErrorCallback: () => void calls.push('on_run_error'),
    ...overrides,
  };
  return { plugin, calls };
}

describe('Agent check on the original message (spec 03 §6.2)', () => {
  it('a denied agent gets one audit event, no model call, no stored input, and the canary nowhere', async () => {
    const secret = canary();
    const observers = new Observers();
    const agent = scriptedAgent([{ text: 'never' }]);
    const { plugin, calls } = watchingPlugin();
    const runner = makeRunner({
      agent,
      runtimePolicy: observers.policy({ agents: { deny: [AGENT] } }),
      auditSink: observers.auditSink,
      events: observers.events,
      logger: observers.logger,
      plugins: [plugin],
    });

    const { streamed, error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-denied', message: `please leak ${secret}` }));

    expectError(error, 'runtime_policy_denied');
    expect(agent.model.calls).toHaveLength(0);
    expect(calls).toEqual([]);
    const events = await storedEvents(runner, 'ses-denied');
    expect(events).toHaveLength(1);
    const [audit] = events;
    expect(audit).toMatchObject({ kind: 'policy_audit', author: 'system', content: 'Runtime policy denied an operation.' });
    const decision = decisionOf(audit);
    expect(decision).toMatchObject({ operation: 'agent_invocation', subject: AGENT, outcome: 'deny', reason: 'explicitly_denied' });
    expect(observers.auditRecords).toEqual([decision]);
    expect(streamed).toEqual([audit]);
    const { decision_id, policy_id, operation, outcome, reason } = decision;
    expect((error as { details: unknown }).details).toEqual({ decision_id, policy_id, operation, outcome, reason });
    expect(ofKind(events, 'user_message')).toEqual([]);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(errorText(error)).not.toContain(secret);
    expect(observers.text()).not.toContain(secret);
    const invocation = observers.telemetry.find((entry) => entry.event === 'agent_runtime.runner.invocation');
    expect(invocation?.payload).toMatchObject({ agent_id: AGENT, outcome: 'runtime_policy_denied', policy_denials: 1, model_calls: 0 });
  });

  it('an original message over the content budget is denied before any plugin runs', async () => {
    const observers = new Observers();
    const agent = scriptedAgent([{ text: 'never' }]);
    const { plugin, calls } = watchingPlugin();
    const runner = makeRunner({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, maxContentBytes: 16 }), plugins: [plugin] });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-big', message: 'x'.repeat(17) }));

    expectError(error, 'runtime_policy_denied');
    expect((error as { details: { reason: string } }).details.reason).toBe('content_budget_exceeded');
    expect(calls).toEqual([]);
    expect(agent.model.calls).toHaveLength(0);
    const events = await storedEvents(runner, 'ses-big');
    expect(events.map((event) => event.kind)).toEqual(['policy_audit']);
    expect(decisionOf(events[0])).toMatchObject({ operation: 'agent_invocation', subject: AGENT, budget: { kind: 'content', limit_bytes: 16 } });
  });

  it('a string message is measured as UTF-8 bytes, so a message of exactly the limit is allowed', async () => {
    const observers = new Observers();
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'ok' }]), runtimePolicy: observers.policy({ agents: { allow: 'all' }, maxContentBytes: 64 }) });

    const result = await runner.run({ userId: USER, message: 'é'.repeat(32) });

    expect(result.status).toBe('completed');
    expect(observers.policyDecisions()[0]).toMatchObject({ operation: 'agent_invocation', measured_bytes: 64, outcome: 'allow' });
  });

  it('the session of another user is session_not_found and nothing is written to it', async () => {
    const sessions = new CountingSessionService();
    await sessions.createSession({ appName: 'runner-tests', userId: 'someone-else', sessionId: 'ses-taken' });
    const agent = scriptedAgent([{ text: 'never' }]);
    const runner = makeRunner({ agent, sessionService: sessions });

    expectError(await runnerError(runner.run({ userId: USER, sessionId: 'ses-taken', message: 'hi' })), 'session_not_found', {});
    expect(await sessions.listEvents({ appName: 'runner-tests', userId: 'someone-else', sessionId: 'ses-taken' })).toEqual([]);
    expect(agent.model.calls).toHaveLength(0);
  });
});

describe('Lifecycle hooks and the effective-input recheck (spec 03 §6.3)', () => {
  it('an onUserMessageCallback that inflates the message is denied as agent_input after onRunErrorCallback, nothing stored', async () => {
    const observers = new Observers();
    const agent = scriptedAgent([{ text: 'never' }]);
    const seenErrors: unknown[] = [];
    const inflated: Content = { role: 'user', parts: [{ text: 'y'.repeat(200) }] };
    const { plugin, calls } = watchingPlugin({
      onUserMessageCallback: () => inflated,
      onRunErrorCallback: ({ error }) => void seenErrors.push(error),
    });
    const runner = makeRunner({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, maxContentBytes: 100 }), plugins: [plugin] });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-inflate', message: 'short' }));

    expectError(error, 'runtime_policy_denied');
    expect(seenErrors).toEqual([error]);
    expect(calls).toEqual(['before_run', 'on_event']);
    expect(agent.model.calls).toHaveLength(0);
    const events = await storedEvents(runner, 'ses-inflate');
    expect(events.map((event) => event.kind)).toEqual(['policy_audit']);
    expect(decisionOf(events[0])).toMatchObject({ operation: 'content', subject: 'agent_input', reason: 'content_budget_exceeded' });
  });

  it('an onEventCallback that inflates the user_message event is measured before it is stored', async () => {
    const observers = new Observers();
    const onRunErrorCallback = jest.fn();
    const plugin: RunnerPlugin = {
      name: 'inflate-event',
      onEventCallback: ({ event }) => (event.kind === 'user_message' ? { content: { role: 'user', parts: [{ text: 'z'.repeat(300) }] } } : undefined),
      onRunErrorCallback,
    };
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), runtimePolicy: observers.policy({ agents: { allow: 'all' }, maxContentBytes: 100 }), plugins: [plugin] });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-event', message: 'short' }));

    expectError(error, 'runtime_policy_denied');
    expect(onRunErrorCallback).toHaveBeenCalledTimes(1);
    const events = await storedEvents(runner, 'ses-event');
    expect(events.map((event) => event.kind)).toEqual(['policy_audit']);
    expect(decisionOf(events[0]).subject).toBe('agent_input');
  });

  it('hooks run in the order onUserMessageCallback, beforeRunCallback, and the replaced message is what is stored', async () => {
    const order: string[] = [];
    const agent = scriptedAgent([{ text: 'answer' }]);
    const plugin: RunnerPlugin = {
      name: 'rewrite',
      onUserMessageCallback: ({ userMessage }) => {
        order.push('on_user_message');
        return { role: 'user', parts: [...userMessage.parts, { text: ' (rewritten)' }] };
      },
      beforeRunCallback: () => void order.push('before_run'),
    };
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: { agents: { allow: 'all' } } });

    const result = await runner.run({ userId: USER, sessionId: 'ses-rewrite', message: 'hello' });

    expect(order).toEqual(['on_user_message', 'before_run']);
    const [user] = ofKind(await storedEvents(runner, 'ses-rewrite'), 'user_message');
    expect(user.content).toEqual({ role: 'user', parts: [{ text: 'hello' }, { text: ' (rewritten)' }] });
    expect(agent.model.calls[0].contents[0]).toEqual({ role: 'user', content: user.content });
    expect(result.output).toEqual({ role: 'model', parts: [{ text: 'answer' }] });
  });

  it('a beforeRunCallback returning Content is the final output and the model is never called', async () => {
    const agent = scriptedAgent([{ text: 'never' }]);
    const afterRun = jest.fn();
    const plugin: RunnerPlugin = { name: 'cache', beforeRunCallback: () => ({ role: 'model', parts: [{ text: 'cached answer' }] }), afterRunCallback: afterRun };
    const runner = makeRunner({ agent, plugins: [plugin] });

    const result = await runner.run({ userId: USER, sessionId: 'ses-cache', message: 'hello' });

    expect(agent.model.calls).toHaveLength(0);
    expect(result).toMatchObject({ status: 'completed', output: { role: 'model', parts: [{ text: 'cached answer' }] } });
    expect((await storedEvents(runner, 'ses-cache')).map((event) => event.kind)).toEqual(['user_message', 'final_output']);
    expect(afterRun).toHaveBeenCalledTimes(1);
  });

  it('a beforeRunCallback output over the budget goes to the final-output check and is denied', async () => {
    const onRunErrorCallback = jest.fn();
    const secret = canary();
    const plugin: RunnerPlugin = { name: 'cache', beforeRunCallback: () => ({ role: 'model', parts: [{ text: `${secret}${'w'.repeat(200)}` }] }), onRunErrorCallback };
    const runner = makeRunner({ agent: scriptedAgent([]), plugins: [plugin], runtimePolicy: { agents: { allow: 'all' }, maxContentBytes: 100 } });

    const { error, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-cache-big', message: 'hello' }));

    expectError(error, 'runtime_policy_denied');
    expect(onRunErrorCallback).toHaveBeenCalledTimes(1);
    const events = await storedEvents(runner, 'ses-cache-big');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'policy_audit']);
    expect(decisionOf(events[1]).subject).toBe('model_output');
    expect(JSON.stringify({ events, streamed })).not.toContain(secret);
  });
});

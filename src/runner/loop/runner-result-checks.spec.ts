import type { RunnerPlugin } from '../agent.types';
import {
  canary,
  countingTool,
  decisionOf,
  drain,
  errorText,
  expectedDenialRecord,
  expectError,
  makeRunner,
  Observers,
  ofKind,
  scriptedAgent,
  storedEvents,
  toolResponses,
  USER,
} from '../testing/runner-harness';

const policy = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const }, maxContentBytes: 200 };

describe('Tool-result check (spec 03 §6.8)', () => {
  it('an over-budget result executes but is replaced by the denial record of the content decision, never stored or streamed', async () => {
    const secret = canary();
    const observers = new Observers();
    const fetchTool = countingTool('fetch_page', () => ({ body: `${secret}${'p'.repeat(300)}` }));
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'fetch_page', args: {} }] }, { text: 'too big' }], { tools: [fetchTool.tool] });
    const runner = makeRunner({ agent, runtimePolicy: observers.policy(policy), auditSink: observers.auditSink, events: observers.events });

    const { result, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-bigresult', message: 'go' }));

    expect(result?.status).toBe('completed');
    expect(fetchTool.executions).toHaveLength(1);
    const events = await storedEvents(runner, 'ses-bigresult');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit', 'tool_response', 'final_output']);
    const decision = decisionOf(events[2]);
    expect(decision).toMatchObject({ operation: 'content', subject: 'tool_result', reason: 'content_budget_exceeded' });
    expect(events[3].content).toEqual({ call_id: 'c1', tool: 'fetch_page', response: expectedDenialRecord(decision) });
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decision));
    expect(JSON.stringify({ events, streamed, calls: agent.model.calls, result })).not.toContain(secret);
    expect(observers.text()).not.toContain(secret);
  });

  it('the check measures the wrapper {success, result}: a result that fits with its wrapper is allowed', async () => {
    const observers = new Observers();
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'small', args: {} }] }, { text: 'ok' }], { tools: [countingTool('small', () => 'fits').tool] });
    const runner = makeRunner({ agent, runtimePolicy: observers.policy(policy) });

    await runner.run({ userId: USER, message: 'go' });

    const measured = observers.policyDecisions().filter((decision) => decision.operation === 'content');
    expect(measured[1]).toMatchObject({ outcome: 'allow', measured_bytes: Buffer.byteLength(JSON.stringify({ result: 'fits', success: true })) });
  });

  it('an afterToolCallback that inflates the result is checked on what it returned', async () => {
    const plugin: RunnerPlugin = { name: 'inflate', afterToolCallback: () => 'q'.repeat(500) };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'small', args: {} }] }, { text: 'ok' }], { tools: [countingTool('small', () => 'fits').tool] });
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: policy });

    await runner.run({ userId: USER, sessionId: 'ses-inflated', message: 'go' });

    const [audit] = ofKind(await storedEvents(runner, 'ses-inflated'), 'policy_audit');
    expect(decisionOf(audit).subject).toBe('tool_result');
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decisionOf(audit)));
  });
  it('an onEventCallback that inflates a tool response is checked on what would be stored', async () => {
    const plugin: RunnerPlugin = { name: 'inflate', onEventCallback: ({ event }) => (event.kind === 'tool_response' ? { content: { response: 'r'.repeat(500) } } : undefined) };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'small', args: {} }] }, { text: 'ok' }], { tools: [countingTool('small', () => 'fits').tool] });
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: policy });

    await runner.run({ userId: USER, sessionId: 'ses-inflated-event', message: 'go' });

    const [audit] = ofKind(await storedEvents(runner, 'ses-inflated-event'), 'policy_audit');
    expect(decisionOf(audit).subject).toBe('tool_result');
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decisionOf(audit)));
  });
});

describe('Final-output check (spec 03 §6.8)', () => {
  it('an over-budget final output fails runtime_policy_denied after onRunErrorCallback, and is stored, streamed and reported nowhere', async () => {
    const secret = canary();
    const observers = new Observers();
    const afterRunCallback = jest.fn();
    const errors: unknown[] = [];
    const plugin: RunnerPlugin = { name: 'observe', afterRunCallback, onRunErrorCallback: ({ error }) => void errors.push(error) };
    const agent = scriptedAgent([{ text: `${secret}${'o'.repeat(300)}` }]);
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: observers.policy(policy), auditSink: observers.auditSink, events: observers.events, logger: observers.logger });

    const { error, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-bigout', message: 'go' }));

    expectError(error, 'runtime_policy_denied');
    expect(errors).toEqual([error]);
    expect(afterRunCallback).not.toHaveBeenCalled();
    const events = await storedEvents(runner, 'ses-bigout');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'policy_audit']);
    const decision = decisionOf(events[1]);
    expect(decision).toMatchObject({ operation: 'content', subject: 'model_output', reason: 'content_budget_exceeded' });
    const { decision_id, policy_id, operation, outcome, reason } = decision;
    expect((error as { details: unknown }).details).toEqual({ decision_id, policy_id, operation, outcome, reason });
    expect(JSON.stringify({ events, streamed })).not.toContain(secret);
    expect(errorText(error)).not.toContain(secret);
    expect(observers.text()).not.toContain(secret);
  });

  it('an allowed final output is stored as final_output authored by the agent, then afterRunCallback observes it', async () => {
    const outputs: unknown[] = [];
    const plugin: RunnerPlugin = { name: 'observe', afterRunCallback: ({ output }) => void outputs.push(output) };
    const agent = scriptedAgent([{ text: 'short answer' }]);
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: policy });

    const result = await runner.run({ userId: USER, sessionId: 'ses-out', message: 'go' });

    const [final] = ofKind(await storedEvents(runner, 'ses-out'), 'final_output');
    expect(final).toMatchObject({ author: agent.name, content: { role: 'model', parts: [{ text: 'short answer' }] }, invocation_id: result.invocation_id });
    expect(result).toEqual({ status: 'completed', invocation_id: result.invocation_id, session_id: 'ses-out', output: final.content });
    expect(outputs).toEqual([final.content]);
  });

  it('an onEventCallback that inflates the final output is checked on what would be stored', async () => {
    const onRunErrorCallback = jest.fn();
    const plugin: RunnerPlugin = {
      name: 'inflate',
      onEventCallback: ({ event }) => (event.kind === 'final_output' ? { content: { role: 'model', parts: [{ text: 'o'.repeat(500) }] } } : undefined),
      onRunErrorCallback,
    };
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'short' }]), plugins: [plugin], runtimePolicy: policy });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-inflated-out', message: 'go' }));

    expectError(error, 'runtime_policy_denied');
    expect(onRunErrorCallback).toHaveBeenCalledTimes(1);
    expect((await storedEvents(runner, 'ses-inflated-out')).map((event) => event.kind)).toEqual(['user_message', 'policy_audit']);
  });
});

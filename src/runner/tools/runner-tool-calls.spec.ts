import { sha256Hex } from '../../shared/text/sha256';
import { amendToolCall, type RunnerPlugin } from '../agent.types';
import {
  canary,
  countingTool,
  countingToolset,
  decisionOf,
  drain,
  expectedDenialRecord,
  expectError,
  makeRunner,
  Observers,
  ofKind,
  scriptedAgent,
  sleep,
  storedEvents,
  toolResponses,
  USER,
} from '../testing/runner-harness';

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
} as const;

/** A plugin whose tool hooks are counted. */
function toolHookPlugin(name = 'tool-hooks') {
  const calls: string[] = [];
  const plugin: RunnerPlugin = {
    name,
    beforeToolCallback: ({ tool }) => void calls.push(`before:${tool.name}`),
    afterToolCallback: ({ tool }) => void calls.push(`after:${tool.name}`),
    onToolErrorCallback: ({ tool }) => void calls.push(`error:${tool.name}`),
  };
  return { plugin, calls };
}

describe('Tool resolution and arguments (spec 03 §6.4)', () => {
  it('a call without an id gets a call- id and the tool turn is stored as model_turn', async () => {
    const weather = countingTool('weather', () => ({ temp: 3 }));
    const agent = scriptedAgent([{ text: 'checking', toolCalls: [{ name: 'weather', args: { city: 'Oslo' } }] }, { text: 'cold' }], { tools: [weather.tool] });
    const runner = makeRunner({ agent });

    const result = await runner.run({ userId: USER, sessionId: 'ses-ids', message: 'weather?' });

    expect(result.status).toBe('completed');
    const [turn] = ofKind(await storedEvents(runner, 'ses-ids'), 'model_turn');
    const [call] = (turn.content as { tool_calls: Array<{ id: string }> }).tool_calls;
    expect(call.id).toMatch(/^call-[A-Za-z0-9_-]{16}$/);
    expect(turn).toMatchObject({ author: agent.name, content: { text: 'checking', tool_calls: [{ id: call.id, name: 'weather', args: { city: 'Oslo' } }] } });
    expect(toolResponses(agent.model.calls[1]).get(call.id)).toEqual({ success: true, result: { temp: 3 } });
  });

  it('schema-invalid arguments are answered invalid_tool_arguments with paths and keywords only, never policy-checked', async () => {
    const secret = canary();
    const observers = new Observers();
    const weather = countingTool('weather', () => ({ temp: 3 }), { parameters: WEATHER_SCHEMA });
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 42, extra: secret } }] }, { text: 'sorry' }], { tools: [weather.tool] });
    // the tool is denied: a policy check would have written an audit event
    const runner = makeRunner({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { deny: ['weather'] } }) });

    const result = await runner.run({ userId: USER, sessionId: 'ses-invalid', message: 'weather?' });

    expect(result.status).toBe('completed');
    expect(weather.executions).toEqual([]);
    const response = toolResponses(agent.model.calls[1]).get('c1') as { success: boolean; error: { kind: string; issues: Array<{ path: string; keyword: string }> } };
    expect(response.success).toBe(false);
    expect(response.error.kind).toBe('invalid_tool_arguments');
    expect(response.error.issues).toEqual(expect.arrayContaining([{ path: '/city', keyword: 'type' }, { path: '/extra', keyword: 'additionalProperties' }]));
    expect(JSON.stringify(response)).not.toContain(secret);
    const events = await storedEvents(runner, 'ses-invalid');
    expect(ofKind(events, 'policy_audit')).toEqual([]);
    expect(observers.policyDecisions().filter((decision) => decision.operation === 'tool_call')).toEqual([]);
  });

  it('arguments that are not a plain object are invalid_tool_arguments even without a schema', async () => {
    const echo = countingTool('echo');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: ['not', 'an', 'object'] }] }, { text: 'ok' }], { tools: [echo.tool] });
    const runner = makeRunner({ agent });

    await runner.run({ userId: USER, message: 'go' });

    expect(echo.executions).toEqual([]);
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: false, error: { kind: 'invalid_tool_arguments', issues: [{ path: '', keyword: 'type' }] } });
  });

  it('static tools take precedence over toolsets, and toolsets are asked in declaration order', async () => {
    const fixed = countingTool('lookup', () => 'static');
    const first = countingToolset('first', ['lookup', 'search'], (name) => ({ name, execute: () => 'first' }));
    const second = countingToolset('second', ['search'], (name) => ({ name, execute: () => 'second' }));
    const agent = scriptedAgent(
      [{ toolCalls: [{ id: 'c1', name: 'lookup', args: {} }, { id: 'c2', name: 'search', args: {} }] }, { text: 'ok' }],
      { tools: [fixed.tool, first.toolset, second.toolset] },
    );
    const runner = makeRunner({ agent });

    await runner.run({ userId: USER, message: 'go' });

    const responses = toolResponses(agent.model.calls[1]);
    expect(responses.get('c1')).toEqual({ success: true, result: 'static' });
    expect(responses.get('c2')).toEqual({ success: true, result: 'first' });
    expect(second.counts.materialized).toBe(0);
  });
});

describe('Tool policy check (spec 03 §6.5)', () => {
  it('a denied call is answered with the denial record, the model is called again and the run completes', async () => {
    const observers = new Observers();
    const secretTool = countingTool('secret_tool');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'secret_tool', args: { q: 1 } }] }, { text: 'could not' }], { tools: [secretTool.tool] });
    const runner = makeRunner({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: ['other'] } }), auditSink: observers.auditSink });

    const { result, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-deny', message: 'go' }));

    expect(result?.status).toBe('completed');
    expect(secretTool.executions).toEqual([]);
    expect(agent.model.calls).toHaveLength(2);
    const events = await storedEvents(runner, 'ses-deny');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit', 'tool_response', 'final_output']);
    const decision = decisionOf(events[2]);
    expect(decision).toMatchObject({ operation: 'tool_call', subject: 'secret_tool', outcome: 'deny', reason: 'not_allowed' });
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decision));
    expect(events[3].content).toEqual({ call_id: 'c1', tool: 'secret_tool', response: expectedDenialRecord(decision) });
    expect(observers.auditRecords).toEqual([decision]);
    expect(streamed).toEqual(events);
  });

  it('no beforeToolCallback or afterToolCallback, plugin or local, runs for a denied call', async () => {
    const { plugin, calls } = toolHookPlugin();
    const local = { before: jest.fn(), after: jest.fn() };
    const blocked = countingTool('blocked');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'blocked', args: {} }] }, { text: 'ok' }], {
      tools: [blocked.tool],
      beforeToolCallback: local.before,
      afterToolCallback: local.after,
    });
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['blocked'], allow: 'all' } } });

    expect((await runner.run({ userId: USER, message: 'go' })).status).toBe('completed');
    expect(calls).toEqual([]);
    expect(local.before).not.toHaveBeenCalled();
    expect(local.after).not.toHaveBeenCalled();
  });

  it('a denied tool that requires confirmation never pauses and writes no runner event', async () => {
    const transfer = countingTool('transfer', () => 'sent', { requireConfirmation: true });
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'transfer', args: {} }] }, { text: 'ok' }], { tools: [transfer.tool] });
    const runner = makeRunner({ agent, runtimePolicy: { agents: { allow: 'all' } } });

    const result = await runner.run({ userId: USER, sessionId: 'ses-noconfirm', message: 'go' });

    expect(result.status).toBe('completed');
    const events = await storedEvents(runner, 'ses-noconfirm');
    expect(ofKind(events, 'confirmation_requested')).toEqual([]);
    expect(events.filter((event) => event.author === 'runner')).toEqual([]);
    expect(transfer.executions).toEqual([]);
  });

  it('a denied toolset tool is never materialised, though its name is listed', async () => {
    const { toolset, counts } = countingToolset('remote', ['remote_search']);
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'remote_search', args: {} }] }, { text: 'ok' }], { tools: [toolset] });
    const runner = makeRunner({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['remote_search'] } } });

    await runner.run({ userId: USER, sessionId: 'ses-toolset', message: 'go' });

    expect(counts.listed).toBeGreaterThan(0);
    expect(counts.materialized).toBe(0);
    expect(counts.closed).toBe(0);
    const [audit] = ofKind(await storedEvents(runner, 'ses-toolset'), 'policy_audit');
    expect(decisionOf(audit).subject).toBe('remote_search');
  });

  it('an allowed toolset tool is materialised on use and its toolset closed once when the invocation ends', async () => {
    let closedDuringRun = -1;
    const { toolset, counts } = countingToolset('remote', ['remote_search'], (name) => ({ name, execute: () => ((closedDuringRun = counts.closed), 'found') }));
    const agent = scriptedAgent(
      [{ toolCalls: [{ id: 'c1', name: 'remote_search', args: {} }] }, { toolCalls: [{ id: 'c2', name: 'remote_search', args: {} }] }, { text: 'ok' }],
      { tools: [toolset] },
    );
    const runner = makeRunner({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } } });

    await runner.run({ userId: USER, message: 'go' });

    expect(counts.materialized).toBe(2);
    expect(closedDuringRun).toBe(0);
    expect(counts.closed).toBe(1);
    expect(toolResponses(agent.model.calls[2]).get('c2')).toEqual({ success: true, result: 'found' });
  });

  it('a toolset that materialises a tool of another name is tool_unavailable', async () => {
    const { toolset } = countingToolset('remote', ['wanted'], () => ({ name: 'other', execute: () => 'x' }));
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'wanted', args: {} }] }, { text: 'ok' }], { tools: [toolset] });

    await makeRunner({ agent }).run({ userId: USER, message: 'go' });

    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: false, error: { kind: 'tool_unavailable' } });
  });

  it('an unknown tool name is policy-checked: denied with an audit event, or tool_not_found when allowed', async () => {
    const deniedAgent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'ghost', args: {} }] }, { text: 'ok' }]);
    const denying = makeRunner({ agent: deniedAgent, runtimePolicy: { agents: { allow: 'all' } } });
    await denying.run({ userId: USER, sessionId: 'ses-ghost', message: 'go' });
    const [audit] = ofKind(await storedEvents(denying, 'ses-ghost'), 'policy_audit');
    // a name the model made up is not recorded: the marker and a digest of the name stand for it
    expect(decisionOf(audit)).toMatchObject({ operation: 'tool_call', subject: 'unknown_tool', subject_digest: sha256Hex('ghost').slice(0, 16), reason: 'not_allowed' });
    expect(toolResponses(deniedAgent.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decisionOf(audit)));

    const allowedAgent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'ghost', args: {} }] }, { text: 'ok' }]);
    const allowing = makeRunner({ agent: allowedAgent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } } });
    await allowing.run({ userId: USER, sessionId: 'ses-ghost2', message: 'go' });
    expect(ofKind(await storedEvents(allowing, 'ses-ghost2'), 'policy_audit')).toEqual([]);
    expect(toolResponses(allowedAgent.model.calls[1]).get('c1')).toEqual({ success: false, error: { kind: 'tool_not_found' } });
  });

  it('arguments over maxArgumentBytes are denied argument_budget_exceeded', async () => {
    const echo = countingTool('echo');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: { text: 'a'.repeat(40) } }] }, { text: 'ok' }], { tools: [echo.tool] });
    const runner = makeRunner({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' }, maxArgumentBytes: 32 } });

    await runner.run({ userId: USER, sessionId: 'ses-args', message: 'go' });

    expect(echo.executions).toEqual([]);
    const [audit] = ofKind(await storedEvents(runner, 'ses-args'), 'policy_audit');
    expect(decisionOf(audit)).toMatchObject({ reason: 'argument_budget_exceeded', budget: { kind: 'arguments', limit_bytes: 32 } });
  });
});

describe('Callbacks for allowed calls (spec 03 §6.6)', () => {
  const policy = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const }, maxArgumentBytes: 64 };

  it('an amendment replaces the arguments after being checked again', async () => {
    const echo = countingTool('echo', (args) => args);
    const plugin: RunnerPlugin = { name: 'amend', beforeToolCallback: ({ args }) => amendToolCall({ args: { ...args, limit: 10 } }) };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: { q: 'a' } }] }, { text: 'ok' }], { tools: [echo.tool] });
    const observers = new Observers();
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: observers.policy(policy) });

    await runner.run({ userId: USER, message: 'go' });

    expect(echo.executions).toEqual([{ q: 'a', limit: 10 }]);
    expect(observers.policyDecisions().filter((decision) => decision.operation === 'tool_call')).toHaveLength(2);
  });

  it('an amendment breaking the argument budget fails the run invalid_plugin_amendment after one audit event', async () => {
    const echo = countingTool('echo');
    const plugin: RunnerPlugin = { name: 'amend', beforeToolCallback: () => amendToolCall({ args: { q: 'b'.repeat(100) } }) };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: { q: 'a' } }] }, { text: 'never' }], { tools: [echo.tool] });
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: policy });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-amend', message: 'go' }));

    expectError(error, 'invalid_plugin_amendment', { hook: 'before_tool', reason: 'runtime_policy_denied' });
    expect(echo.executions).toEqual([]);
    const events = await storedEvents(runner, 'ses-amend');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit']);
    expect(decisionOf(events[2])).toMatchObject({ operation: 'tool_call', reason: 'argument_budget_exceeded' });
  });

  it('an amendment that renames the tool is tool_reroute_not_allowed', async () => {
    const echo = countingTool('echo');
    const plugin: RunnerPlugin = { name: 'reroute', beforeToolCallback: ({ args }) => amendToolCall({ args, name: 'other' }) };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'never' }], { tools: [echo.tool, countingTool('other').tool] });
    const runner = makeRunner({ agent, plugins: [plugin], runtimePolicy: policy });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-reroute', message: 'go' }));

    expectError(error, 'invalid_plugin_amendment', { hook: 'before_tool', reason: 'tool_reroute_not_allowed' });
    expect(echo.executions).toEqual([]);
    expect(ofKind(await storedEvents(runner, 'ses-reroute'), 'policy_audit')).toEqual([]);
  });

  it('an amendment failing the schema is invalid_tool_arguments, and one newly needing confirmation is confirmation_required', async () => {
    const weather = countingTool('weather', () => 1, { parameters: WEATHER_SCHEMA, requireConfirmation: (args) => args.city === 'Moscow' });
    const run = async (amended: object) => {
      const plugin: RunnerPlugin = { name: 'amend', beforeToolCallback: () => amendToolCall({ args: amended as never }) };
      const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Oslo' } }] }, { text: 'never' }], { tools: [weather.tool] });
      return (await drain(makeRunner({ agent, plugins: [plugin], runtimePolicy: policy }).runAsync({ userId: USER, message: 'go' }))).error;
    };

    expectError(await run({ city: 7 }), 'invalid_plugin_amendment', { hook: 'before_tool', reason: 'invalid_tool_arguments' });
    expectError(await run({ city: 'Moscow' }), 'invalid_plugin_amendment', { hook: 'before_tool', reason: 'confirmation_required' });
    expect(weather.executions).toEqual([]);
  });

  it('a throwing tool is answered tool_error without the exception text', async () => {
    const secret = canary();
    const { plugin, calls } = toolHookPlugin();
    const failing = countingTool('failing', () => {
      throw new Error(`database said ${secret}`);
    });
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'failing', args: {} }] }, { text: 'sorry' }], { tools: [failing.tool] });
    const runner = makeRunner({ agent, plugins: [plugin] });

    const result = await runner.run({ userId: USER, sessionId: 'ses-throw', message: 'go' });

    expect(result.status).toBe('completed');
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: false, error: { kind: 'tool_error' } });
    expect(calls).toEqual(['before:failing', 'error:failing']);
    expect(JSON.stringify(await storedEvents(runner, 'ses-throw'))).not.toContain(secret);
  });

  it('an onToolErrorCallback return becomes the result, and afterToolCallback may replace it', async () => {
    const failing = countingTool('failing', () => {
      throw new Error('x');
    });
    const plugin: RunnerPlugin = {
      name: 'rescue',
      onToolErrorCallback: () => ({ fallback: true }),
      afterToolCallback: ({ result }) => ({ wrapped: result }),
    };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'failing', args: {} }] }, { text: 'ok' }], { tools: [failing.tool] });

    await makeRunner({ agent, plugins: [plugin] }).run({ userId: USER, message: 'go' });

    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: true, result: { wrapped: { fallback: true } } });
  });
});

describe('Parallel tool calls (spec 03 §6.10)', () => {
  it('allowed calls run concurrently and their responses are committed in model order', async () => {
    const finished: string[] = [];
    const running = { now: 0, max: 0 };
    const slowTool = (name: string, ms: number) =>
      countingTool(name, async () => {
        running.now += 1;
        running.max = Math.max(running.max, running.now);
        await sleep(ms);
        running.now -= 1;
        finished.push(name);
        return name;
      }).tool;
    const agent = scriptedAgent(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'slow', args: {} },
            { id: 'c2', name: 'medium', args: {} },
            { id: 'c3', name: 'fast', args: {} },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [slowTool('slow', 60), slowTool('medium', 30), slowTool('fast', 1)], parallelToolCalls: true },
    );
    const runner = makeRunner({ agent });

    await runner.run({ userId: USER, sessionId: 'ses-parallel', message: 'go' });

    expect(finished).toEqual(['fast', 'medium', 'slow']);
    expect(running.max).toBe(3);
    const responses = ofKind(await storedEvents(runner, 'ses-parallel'), 'tool_response').map((event) => (event.content as { call_id: string }).call_id);
    expect(responses).toEqual(['c1', 'c2', 'c3']);
    expect([...toolResponses(agent.model.calls[1]).keys()]).toEqual(['c1', 'c2', 'c3']);
  });

  it('a denied call is a barrier: the batch before it completes, then its audit and denial, then the next batch', async () => {
    const started: string[] = [];
    const tool = (name: string, ms: number) =>
      countingTool(name, async () => {
        started.push(`${name}:start`);
        await sleep(ms);
        started.push(`${name}:end`);
        return name;
      }).tool;
    const agent = scriptedAgent(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'a', args: {} },
            { id: 'c2', name: 'denied', args: {} },
            { id: 'c3', name: 'b', args: {} },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [tool('a', 30), tool('b', 1)], parallelToolCalls: true },
    );
    const runner = makeRunner({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: ['a', 'b'] } } });

    await runner.run({ userId: USER, sessionId: 'ses-barrier', message: 'go' });

    expect(started).toEqual(['a:start', 'a:end', 'b:start', 'b:end']);
    const events = await storedEvents(runner, 'ses-barrier');
    const order = events.slice(2, -1).map((event) => (event.kind === 'policy_audit' ? 'audit' : (event.content as { call_id: string }).call_id));
    expect(order).toEqual(['c1', 'audit', 'c2', 'c3']);
  });
  it('an invalid_tool_arguments call is a barrier too', async () => {
    const trace: string[] = [];
    const tool = (name: string, ms: number) =>
      countingTool(
        name,
        async () => {
          trace.push(`${name}:start`);
          await sleep(ms);
          trace.push(`${name}:end`);
          return name;
        },
        { parameters: { type: 'object', properties: { n: { type: 'number' } } } },
      ).tool;
    const agent = scriptedAgent(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'a', args: {} },
            { id: 'c2', name: 'a', args: { n: 'not a number' } },
            { id: 'c3', name: 'b', args: {} },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [tool('a', 30), tool('b', 1)], parallelToolCalls: true },
    );
    const runner = makeRunner({ agent });

    await runner.run({ userId: USER, sessionId: 'ses-barrier-args', message: 'go' });

    expect(trace).toEqual(['a:start', 'a:end', 'b:start', 'b:end']);
    const responses = ofKind(await storedEvents(runner, 'ses-barrier-args'), 'tool_response').map((event) => (event.content as { call_id: string }).call_id);
    expect(responses).toEqual(['c1', 'c2', 'c3']);
  });
});

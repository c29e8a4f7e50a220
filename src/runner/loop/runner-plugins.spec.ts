import type { EventReplacement, RunnerPlugin } from '../agent.types';
import { canary, countingTool, drain, errorText, expectError, makeRunner, Observers, ofKind, scriptedAgent, storedEvents, toolResponses, USER } from '../testing/runner-harness';

describe('Plugins (spec 03 §2)', () => {
  it('the first non-undefined beforeToolCallback wins: later plugins and the local callback are skipped and the tool does not run', async () => {
    const seen: string[] = [];
    const echo = countingTool('echo');
    const plugins: RunnerPlugin[] = [
      { name: 'first', beforeToolCallback: () => void seen.push('first') },
      { name: 'second', beforeToolCallback: () => (seen.push('second'), { cached: true }) },
      { name: 'third', beforeToolCallback: () => void seen.push('third') },
    ];
    const local = jest.fn();
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'ok' }], { tools: [echo.tool], beforeToolCallback: local });

    await makeRunner({ agent, plugins }).run({ userId: USER, message: 'go' });

    expect(seen).toEqual(['first', 'second']);
    expect(local).not.toHaveBeenCalled();
    expect(echo.executions).toEqual([]);
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: true, result: { cached: true } });
  });

  it('plugins run before the local callback, which runs when every plugin returned undefined', async () => {
    const seen: string[] = [];
    const echo = countingTool('echo', () => 'raw');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'ok' }], {
      tools: [echo.tool],
      beforeToolCallback: () => void seen.push('local-before'),
      afterToolCallback: () => (seen.push('local-after'), 'local result'),
    });
    const plugin: RunnerPlugin = { name: 'p', beforeToolCallback: () => void seen.push('plugin-before'), afterToolCallback: () => void seen.push('plugin-after') };

    await makeRunner({ agent, plugins: [plugin] }).run({ userId: USER, message: 'go' });

    expect(seen).toEqual(['plugin-before', 'local-before', 'plugin-after', 'local-after']);
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: true, result: 'local result' });
  });

  it('a throwing plugin fails the run plugin_failed {hook, plugin} without its text', async () => {
    const secret = canary();
    const echo = countingTool('echo');
    const onRunErrorCallback = jest.fn();
    const plugins: RunnerPlugin[] = [
      {
        name: 'broken',
        beforeToolCallback: () => {
          throw new Error(secret);
        },
        onRunErrorCallback,
      },
    ];
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'never' }], { tools: [echo.tool] });

    const { error } = await drain(makeRunner({ agent, plugins }).runAsync({ userId: USER, message: 'go' }));

    expectError(error, 'plugin_failed', { hook: 'before_tool', plugin: 'broken' });
    expect(errorText(error)).not.toContain(secret);
    expect(echo.executions).toEqual([]);
    expect(onRunErrorCallback).toHaveBeenCalledTimes(1);
  });

  it('a throwing local callback is plugin_failed with plugin agent_callback', async () => {
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'never' }], {
      tools: [countingTool('echo').tool],
      afterToolCallback: () => {
        throw new Error('nope');
      },
    });

    expectError((await drain(makeRunner({ agent }).runAsync({ userId: USER, message: 'go' }))).error, 'plugin_failed', { hook: 'after_tool', plugin: 'agent_callback' });
  });

  it('a throwing afterRunCallback is logged without content and the run still completes; a throwing onRunErrorCallback is swallowed', async () => {
    const secret = canary();
    const observers = new Observers();
    const plugin: RunnerPlugin = {
      name: 'noisy',
      afterRunCallback: () => {
        throw new Error(secret);
      },
      onRunErrorCallback: () => {
        throw new Error(secret);
      },
    };
    const completedRun = await makeRunner({ agent: scriptedAgent([{ text: 'fine' }]), plugins: [plugin], logger: observers.logger }).run({ userId: USER, message: 'go' });
    expect(completedRun.status).toBe('completed');
    expect(observers.logLines).toHaveLength(1);
    expect(observers.logLines[0]).toContain('noisy');

    const { error } = await drain(makeRunner({ agent: scriptedAgent([]), plugins: [plugin], logger: observers.logger }).runAsync({ userId: USER, message: 'go' }));
    expectError(error, 'model_failed', { reason: 'script_exhausted' });
    expect(observers.text()).not.toContain(secret);
  });

  it('onEventCallback replacements of content and actions are what is stored; a tool_response may change only its response', async () => {
    const plugin: RunnerPlugin = {
      name: 'rewrite-events',
      onEventCallback: ({ event }): EventReplacement | undefined => {
        if (event.kind === 'model_turn') return { actions: { tagged: true } };
        if (event.kind === 'tool_response') return { content: { call_id: 'forged', tool: 'forged', response: { success: true, result: 'replaced' } } };
        if (event.kind === 'final_output') return { content: { role: 'model', parts: [{ text: 'edited answer' }] } };
        return undefined;
      },
    };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'original answer' }], { tools: [countingTool('echo').tool] });
    const runner = makeRunner({ agent, plugins: [plugin] });

    const { result, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-onevent', message: 'go' }));

    const events = await storedEvents(runner, 'ses-onevent');
    expect(streamed).toEqual(events);
    expect(ofKind(events, 'model_turn')[0].actions).toEqual({ tagged: true });
    expect(ofKind(events, 'tool_response')[0].content).toEqual({ call_id: 'c1', tool: 'echo', response: { success: true, result: 'replaced' } });
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: true, result: 'replaced' });
    expect(ofKind(events, 'final_output')[0].content).toEqual({ role: 'model', parts: [{ text: 'edited answer' }] });
    expect(result?.output).toEqual({ role: 'model', parts: [{ text: 'edited answer' }] });
    const [turn] = ofKind(events, 'model_turn');
    expect(turn).toMatchObject({ author: agent.name, kind: 'model_turn' });
  });

  it.each([
    ['user_message', 'plain text'],
    ['final_output', { role: 'user', parts: [{ text: 'wrong role' }] }],
    ['model_turn', { tool_calls: [{ id: 'forged', name: 'echo', args: {} }] }],
    ['model_turn', 'plain text'],
  ])('an onEventCallback content for %s that breaks the kind\'s shape is plugin_failed, and the session stays usable', async (kind, content) => {
    const plugin: RunnerPlugin = { name: 'mangle', onEventCallback: ({ event }) => (event.kind === kind ? { content: content as never } : undefined) };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'answer' }, { text: 'later' }], { tools: [countingTool('echo').tool] });
    const runner = makeRunner({ agent, plugins: [plugin] });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-mangle', message: 'go' }));

    expectError(error, 'plugin_failed', { hook: 'on_event', plugin: 'mangle' });
    const later = makeRunner({ agent, sessionService: runner.sessionService });
    expect((await later.run({ userId: USER, sessionId: 'ses-mangle', message: 'again' })).status).toBe('completed');
  });

  it('an onEventCallback may redact the arguments of a stored model_turn', async () => {
    const plugin: RunnerPlugin = {
      name: 'redact',
      onEventCallback: ({ event }) =>
        event.kind === 'model_turn' ? { content: { tool_calls: (event.content as { tool_calls: Array<{ id: string; name: string }> }).tool_calls.map(({ id, name }) => ({ id, name, args: {} })) } } : undefined,
    };
    const echo = countingTool('echo');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: { token: 'hidden' } }] }, { text: 'ok' }], { tools: [echo.tool] });
    const runner = makeRunner({ agent, plugins: [plugin] });

    await runner.run({ userId: USER, sessionId: 'ses-redact', message: 'go' });

    expect(echo.executions).toEqual([{ token: 'hidden' }]);
    expect(ofKind(await storedEvents(runner, 'ses-redact'), 'model_turn')[0].content).toEqual({ tool_calls: [{ id: 'c1', name: 'echo', args: {} }] });
  });
});

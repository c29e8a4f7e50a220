import { REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, Runner, type Event, type InvocationContext } from '@google/adk';
import { verifyDecisionDigest } from '../../policy/policy-decision';
import { AUDIT_EVENT_TEXT, denialRecord } from '../../runner/loop/event-recorder';
import { AdkSafetyPlugin } from './adk-safety-plugin';
import { ADK_SAFETY_PLUGIN_NAME } from './adk-plugin-chain';
import {
  APP,
  auditEvents,
  calls,
  countingTool,
  decisionOf,
  drain,
  expectRunnerError,
  makeFacade,
  message,
  Observers,
  plugin,
  RecordingSessionService,
  responses,
  ROOT,
  scriptedAgent,
  storedEvents,
  text,
  USER,
} from './testing/adk-harness';

const confirmationCalls = (events: readonly Event[]) =>
  events.flatMap((event) => event.content?.parts ?? []).filter((part) => part.functionCall?.name === REQUEST_CONFIRMATION_FUNCTION_CALL_NAME);

describe('AdkSafetyPlugin: beforeToolCallback denies by returning the denial record (spec 03 §11.2, §6.11)', () => {
  it('a denied tool is never executed; its answer is the Runner-shaped denial record, after one audit event', async () => {
    const observers = new Observers();
    const echo = countingTool('echo');
    const wipe = countingTool('wipe');
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'echo', id: 'c1' }, { name: 'wipe', id: 'c2' }), text('done')], { tools: [echo.tool, wipe.tool] });
    const facade = makeFacade({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: ['echo'] } }), auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-deny', newMessage: message('hi') }));

    expect(error).toBeUndefined();
    expect(wipe.executions()).toBe(0);
    expect(echo.executions()).toBe(1);
    const stored = await storedEvents(facade, 's-deny');
    const audits = auditEvents(stored);
    expect(audits).toHaveLength(1);
    const [audit] = audits;
    const decision = decisionOf(audit);
    expect(decision).toMatchObject({ operation: 'tool_call', subject: 'wipe', outcome: 'deny', reason: 'not_allowed' });
    expect(verifyDecisionDigest(decision)).toBe(true);
    expect(audit.content).toEqual({ parts: [{ text: AUDIT_EVENT_TEXT }] });
    expect(observers.auditRecords).toEqual([decision]);
    const answers = responses(stored);
    expect(answers.get('c2')).toEqual(denialRecord(decision));
    expect(answers.get('c1')).toEqual({ ok: true });
    // stored and streamed: the decision before the answer that carries it
    const responseIndex = stored.findIndex((event) => event.content?.parts?.some((part) => part.functionResponse?.id === 'c2'));
    expect(stored.indexOf(audit)).toBe(responseIndex - 1);
    expect(audit.invocationId).toBe(stored[responseIndex].invocationId);
    expect(events.map((event) => event.author)).toEqual([ROOT, 'system', ROOT, ROOT]);
    expect(events[1].id).toBe(audit.id);
    // the model sees the denial record but never the audit event
    const next = JSON.stringify(model.requests[1].contents);
    expect(next).toContain(decision.decision_id);
    expect(next).not.toContain(AUDIT_EVENT_TEXT);
    expect(events.at(-1)?.content?.parts?.[0]?.text).toBe('done');
  });

  it('ADK skips every later callback of a denied call: application plugins and the agent’s own', async () => {
    const seen: string[] = [];
    const wipe = countingTool('wipe');
    const echo = countingTool('echo');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'wipe', id: 'c1' }, { name: 'echo', id: 'c2' }), text('done')], {
      tools: [wipe.tool, echo.tool],
      beforeToolCallback: async ({ tool }) => void seen.push(`agent-before:${tool.name}`),
      afterToolCallback: async ({ tool }) => {
        seen.push(`agent-after:${tool.name}`);
        return { replaced: 'by the agent' };
      },
    });
    const watcher = plugin('watcher', {
      beforeToolCallback: async ({ tool }: { tool: { name: string } }) => void seen.push(`plugin-before:${tool.name}`),
      afterToolCallback: async ({ tool }: { tool: { name: string } }) => {
        seen.push(`plugin-after:${tool.name}`);
        return { replaced: 'by a plugin' };
      },
    });
    const facade = makeFacade({ agent, plugins: [watcher], runtimePolicy: { agents: { allow: 'all' }, tools: { allow: ['echo'] } } });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-skip', newMessage: message('hi') }));

    expect(seen).toEqual(['plugin-before:echo', 'agent-before:echo', 'plugin-after:echo']);
    const answers = responses(await storedEvents(facade, 's-skip'));
    expect(answers.get('c1')).toMatchObject({ success: false, error: { kind: 'runtime_policy_denied', reason: 'not_allowed' } });
    expect(answers.get('c2')).toEqual({ replaced: 'by a plugin' });
  });

  it('a denied tool that requires confirmation never reaches a confirmation', async () => {
    const observers = new Observers();
    const transfer = countingTool('transfer_money', () => ({ sent: true }), { requireConfirmation: true });
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'transfer_money', args: { amount: 10 } }), text('I could not do that')], { tools: [transfer.tool] });
    const facade = makeFacade({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['transfer_money'] } }, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-confirm-denied', newMessage: message('pay') }));

    expect(error).toBeUndefined();
    const stored = await storedEvents(facade, 's-confirm-denied');
    expect(transfer.executions()).toBe(0);
    expect(confirmationCalls(stored)).toEqual([]);
    expect(stored.every((event) => Object.keys(event.actions.requestedToolConfirmations ?? {}).length === 0)).toBe(true);
    expect(observers.auditRecords.map((decision) => decision.reason)).toEqual(['explicitly_denied']);
    expect(events.at(-1)?.content?.parts?.[0]?.text).toBe('I could not do that');
  });

  it('arguments an application plugin changed in place are checked again', async () => {
    const observers = new Observers();
    const search = countingTool('search');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'search', args: { q: 'a' } }), text('done')], { tools: [search.tool] });
    const stuffer = plugin('stuffer', {
      beforeToolCallback: async ({ toolArgs }: { toolArgs: Record<string, unknown> }) => {
        toolArgs.q = 'x'.repeat(200);
        return undefined;
      },
    });
    const facade = makeFacade({ agent, plugins: [stuffer], runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' }, maxArgumentBytes: 100 }, auditSink: observers.auditSink });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-mutate', newMessage: message('hi') }));

    expect(search.executions()).toBe(0);
    expect(observers.auditRecords.map((decision) => [decision.operation, decision.reason])).toEqual([['tool_call', 'argument_budget_exceeded']]);
  });
});

describe('AdkSafetyPlugin: afterToolCallback (spec 03 §11.2, §6.8)', () => {
  it('an oversized result is replaced by the denial record of its content decision; the result is stored nowhere', async () => {
    const observers = new Observers();
    const secret = 'result-body-'.repeat(40);
    const fetchPage = countingTool('fetch_page', () => ({ body: secret }));
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'fetch_page', id: 'c1' }), text('summarised')], { tools: [fetchPage.tool] });
    const facade = makeFacade({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' }, maxContentBytes: 300 }, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-result', newMessage: message('hi') }));

    expect(error).toBeUndefined();
    expect(fetchPage.executions()).toBe(1);
    const stored = await storedEvents(facade, 's-result');
    const [audit] = auditEvents(stored);
    expect(decisionOf(audit)).toMatchObject({ operation: 'content', subject: 'tool_result', reason: 'content_budget_exceeded', budget: { limit_bytes: 300 } });
    expect(responses(stored).get('c1')).toEqual(denialRecord(decisionOf(audit)));
    expect(JSON.stringify(stored)).not.toContain('result-body-');
    expect(JSON.stringify(events)).not.toContain('result-body-');
    expect(JSON.stringify(model.requests[1].contents)).not.toContain('result-body-');
  });

  it("the budget applies to the result as the application's plugins left it", async () => {
    const observers = new Observers();
    const small = countingTool('small', () => ({ ok: 1 }));
    const big = countingTool('big', () => ({ body: 'b'.repeat(400) }));
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'small', id: 'c1' }, { name: 'big', id: 'c2' }), text('done')], { tools: [small.tool, big.tool] });
    const swapper = plugin('swapper', {
      afterToolCallback: async ({ tool }: { tool: { name: string } }) => (tool.name === 'small' ? { body: 's'.repeat(400) } : { trimmed: true }),
    });
    const facade = makeFacade({ agent, plugins: [swapper], runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' }, maxContentBytes: 300 }, auditSink: observers.auditSink });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-swap', newMessage: message('hi') }));

    const answers = responses(await storedEvents(facade, 's-swap'));
    expect(answers.get('c1')).toMatchObject({ success: false, error: { kind: 'runtime_policy_denied', reason: 'content_budget_exceeded' } });
    expect(answers.get('c2')).toEqual({ trimmed: true });
    expect(observers.auditRecords).toHaveLength(1);
  });

  it("a result an agent's own afterToolCallback substituted is measured before ADK stores it", async () => {
    const observers = new Observers();
    const echo = countingTool('echo');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'echo', id: 'c1' }), text('done')], { tools: [echo.tool], afterToolCallback: async () => ({ body: 'a'.repeat(400) }) });
    const facade = makeFacade({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' }, maxContentBytes: 300 }, auditSink: observers.auditSink });

    const { events } = await drain(facade.runAsync({ userId: USER, sessionId: 's-local', newMessage: message('hi') }));

    const stored = await storedEvents(facade, 's-local');
    const [audit] = auditEvents(stored);
    expect(decisionOf(audit)).toMatchObject({ subject: 'tool_result', reason: 'content_budget_exceeded' });
    expect(responses(stored).get('c1')).toEqual(denialRecord(decisionOf(audit)));
    expect(JSON.stringify(events)).not.toContain('a'.repeat(400));
  });

  it('a result measured once is not measured again when ADK stores it', async () => {
    const observers = new Observers();
    const echo = countingTool('echo', () => 'plain text result');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'echo', id: 'c1' }), text('done')], { tools: [echo.tool] });
    const facade = makeFacade({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: 'all' } }) });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-once', newMessage: message('hi') }));

    const contentChecks = observers.telemetry.filter((entry) => (entry.payload as { operation: string }).operation === 'content');
    // agent_input (the stored user message), tool_result (the string, which ADK then stores as {result}), model_output
    expect(contentChecks).toHaveLength(3);
    expect(responses(await storedEvents(facade, 's-once')).get('c1')).toEqual({ result: 'plain text result' });
  });

  it('a call awaiting confirmation is left alone; the resumed call is checked against the policy of the resuming run', async () => {
    const observers = new Observers();
    const sessions = new RecordingSessionService();
    const transfer = countingTool('transfer_money', () => ({ sent: true }), { requireConfirmation: true });
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'transfer_money', id: 'c1', args: { amount: 10 } }), text('sent')], { tools: [transfer.tool] });
    // ADK's own "requires confirmation" answer is larger than this budget: checking it would deny it
    const facade = makeFacade({ agent, sessionService: sessions, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' }, maxContentBytes: 60 }, auditSink: observers.auditSink });

    const first = await drain(facade.runAsync({ userId: USER, sessionId: 's-confirm', newMessage: message('pay') }));

    expect(first.error).toBeUndefined();
    expect(transfer.executions()).toBe(0);
    expect(observers.auditRecords).toEqual([]);
    const [request] = confirmationCalls(await storedEvents(facade, 's-confirm'));
    expect(request.functionCall?.args).toMatchObject({ originalFunctionCall: { name: 'transfer_money', id: 'c1' } });

    const answer = { role: 'user', parts: [{ functionResponse: { id: request.functionCall?.id, name: REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, response: { confirmed: true } } }] };
    const stricter = makeFacade({ agent, sessionService: sessions, runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['transfer_money'] } }, auditSink: observers.auditSink });
    const resumed = await drain(stricter.runAsync({ userId: USER, sessionId: 's-confirm', newMessage: answer as never }));

    expect(resumed.error).toBeUndefined();
    expect(transfer.executions()).toBe(0);
    expect(observers.auditRecords.map((decision) => [decision.subject, decision.reason])).toEqual([['transfer_money', 'explicitly_denied']]);
    expect(responses(await storedEvents(stricter, 's-confirm')).get('c1')).toMatchObject({ error: { kind: 'runtime_policy_denied' } });
  });

  it('a confirmed call the policy still allows runs', async () => {
    const transfer = countingTool('transfer_money', () => ({ sent: true }), { requireConfirmation: true });
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'transfer_money', id: 'c1', args: { amount: 10 } }), text('sent')], { tools: [transfer.tool] });
    const facade = makeFacade({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } } });
    await drain(facade.runAsync({ userId: USER, sessionId: 's-confirm-ok', newMessage: message('pay') }));
    const [request] = confirmationCalls(await storedEvents(facade, 's-confirm-ok'));

    const answer = { role: 'user', parts: [{ functionResponse: { id: request.functionCall?.id, name: REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, response: { confirmed: true } } }] };
    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-confirm-ok', newMessage: answer as never }));

    expect(error).toBeUndefined();
    expect(transfer.executions()).toBe(1);
    expect(responses(await storedEvents(facade, 's-confirm-ok')).get('c1')).toEqual({ sent: true });
  });
});

describe('AdkSafetyPlugin: onToolErrorCallback', () => {
  it("a throwing tool is answered {success: false, error: {kind: 'tool_error'}}, its text stored nowhere", async () => {
    const explode = countingTool('explode', () => {
      throw new Error('db password is hunter2');
    });
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'explode', id: 'c1' }), text('sorry')], { tools: [explode.tool] });
    const facade = makeFacade({ agent, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } } });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-explode', newMessage: message('hi') }));

    expect(error).toBeUndefined();
    const stored = await storedEvents(facade, 's-explode');
    expect(responses(stored).get('c1')).toEqual({ success: false, error: { kind: 'tool_error' } });
    expect(JSON.stringify([stored, events, model.requests])).not.toContain('hunter2');
  });

  it("an application plugin's answer to a tool error wins", async () => {
    const explode = countingTool('explode', () => {
      throw new Error('boom');
    });
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'explode', id: 'c1' }), text('ok')], { tools: [explode.tool] });
    const rescuer = plugin('rescuer', { onToolErrorCallback: async () => ({ fallback: 'cached answer' }) });
    const facade = makeFacade({ agent, plugins: [rescuer], runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } } });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-rescue', newMessage: message('hi') }));

    expect(responses(await storedEvents(facade, 's-rescue')).get('c1')).toEqual({ fallback: 'cached answer' });
  });
});

describe('AdkSafetyPlugin: the final-output budget before ADK stores the event (spec 03 §11.2, §6.8)', () => {
  it('an oversized final answer is runtime_policy_denied: not stored, audited, the run aborted and the permit released', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const { agent } = scriptedAgent(ROOT, [text('y'.repeat(400))]);
    const facade = makeFacade({ agent, admission: { controller: admission }, runtimePolicy: { agents: { allow: 'all' }, maxContentBytes: 300 }, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-final', newMessage: message('hi') }));

    const denial = expectRunnerError(error, 'runtime_policy_denied');
    const stored = await storedEvents(facade, 's-final');
    expect(stored.map((event) => event.author)).toEqual(['user', 'system']);
    const decision = decisionOf(stored[1]);
    expect(decision).toMatchObject({ operation: 'content', subject: 'model_output', reason: 'content_budget_exceeded' });
    expect(denial.details).toMatchObject({ decision_id: decision.decision_id, reason: 'content_budget_exceeded' });
    expect(events.map((event) => event.author)).toEqual(['system']);
    expect(JSON.stringify([stored, events])).not.toContain('y'.repeat(40));
    expect(observers.auditRecords).toEqual([decision]);
    expect(admission.status().active).toBe(0);
  });

  it("an application plugin's onEventCallback replacement is what gets measured", async () => {
    const { agent } = scriptedAgent(ROOT, [text('short')]);
    const inflater = plugin('inflater', { onEventCallback: async ({ event }: { event: Event }) => ({ ...event, content: { role: 'model', parts: [{ text: 'z'.repeat(400) }] } }) });
    const facade = makeFacade({ agent, plugins: [inflater], runtimePolicy: { agents: { allow: 'all' }, maxContentBytes: 300 } });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-inflate', newMessage: message('hi') }));

    expectRunnerError(error, 'runtime_policy_denied');
    expect((await storedEvents(facade, 's-inflate')).map((event) => event.author)).toEqual(['user', 'system']);
  });

  it('content a beforeRunCallback returns is checked before ADK stores it as the answer', async () => {
    const { agent, model } = scriptedAgent(ROOT, [text('never')]);
    const cached = (body: string) => plugin('cache', { beforeRunCallback: async () => ({ role: 'model', parts: [{ text: body }] }) });
    const denied = makeFacade({ agent, plugins: [cached('c'.repeat(400))], runtimePolicy: { agents: { allow: 'all' }, maxContentBytes: 300 } });
    const allowed = makeFacade({ agent, plugins: [cached('from cache')], runtimePolicy: { agents: { allow: 'all' }, maxContentBytes: 300 } });

    const refused = await drain(denied.runAsync({ userId: USER, sessionId: 's-cache', newMessage: message('hi') }));
    const served = await drain(allowed.runAsync({ userId: USER, sessionId: 's-cache', newMessage: message('hi') }));

    expectRunnerError(refused.error, 'runtime_policy_denied');
    expect((await storedEvents(denied, 's-cache')).map((event) => event.author)).toEqual(['user', 'system']);
    expect(served.events.map((event) => event.content?.parts?.[0]?.text)).toEqual(['from cache']);
    expect(model.calls).toBe(0);
  });
});

describe('AdkSafetyPlugin: wraps the application plugins', () => {
  it("is the only plugin ADK knows: the application's plugins run inside it", async () => {
    let registered: unknown[] = [];
    const probe = plugin('probe', {
      beforeRunCallback: async ({ invocationContext }: { invocationContext: InvocationContext }) => {
        const { pluginManager } = invocationContext;
        registered = [pluginManager.getPlugin(ADK_SAFETY_PLUGIN_NAME) instanceof AdkSafetyPlugin, pluginManager.getPlugin('probe')];
        return undefined;
      },
    });
    const facade = makeFacade({ agent: scriptedAgent(ROOT, [text('ok')]).agent, plugins: [probe], runtimePolicy: { agents: { allow: 'all' } } });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-registered', newMessage: message('hi') }));

    expect(registered).toEqual([true, undefined]);
  });

  it('runs them in order inside itself, the first non-undefined return winning, ADK-only hooks included', async () => {
    const order: string[] = [];
    const { agent, model } = scriptedAgent(ROOT, [text('from the model')]);
    const first = plugin('first', { beforeModelCallback: async () => void order.push('first') });
    const second = plugin('second', {
      beforeModelCallback: async () => {
        order.push('second');
        return { content: { role: 'model', parts: [{ text: 'from a plugin' }] } };
      },
    });
    const third = plugin('third', { beforeModelCallback: async () => void order.push('third') });
    const facade = makeFacade({ agent, plugins: [first, second, third], runtimePolicy: { agents: { allow: 'all' } } });

    const { events } = await drain(facade.runAsync({ userId: USER, sessionId: 's-order', newMessage: message('hi') }));

    expect(order).toEqual(['first', 'second']);
    expect(model.calls).toBe(0);
    expect(events.map((event) => event.content?.parts?.[0]?.text)).toEqual(['from a plugin']);
  });

  it('works on its own inside a plain ADK Runner: a denial still answers with the record and writes the audit event', async () => {
    const observers = new Observers();
    const wipe = countingTool('wipe');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'wipe', id: 'c1' }), text('done')], { tools: [wipe.tool] });
    const sessionService = new RecordingSessionService();
    await sessionService.createSession({ appName: APP, userId: USER, sessionId: 's-plain' });
    const safety = new AdkSafetyPlugin({ runtimePolicy: { agents: { allow: 'all' } }, auditSink: observers.auditSink });
    const runner = new Runner({ appName: APP, agent, sessionService, plugins: [safety] });

    await drain(runner.runAsync({ userId: USER, sessionId: 's-plain', newMessage: message('hi') }));

    const stored = (await sessionService.getSession({ appName: APP, userId: USER, sessionId: 's-plain' }))?.events ?? [];
    expect(wipe.executions()).toBe(0);
    expect(auditEvents(stored)).toHaveLength(1);
    expect(responses(stored).get('c1')).toEqual(denialRecord(observers.auditRecords[0]));
  });

  it.each([
    ['no policy', {}, 'invalid_runner_options', { field: 'runtimePolicy' }],
    ['an unknown key', { runtimePolicy: {}, extra: 1 }, 'invalid_runner_options', { field: 'extra' }],
    ['bad plugins', { runtimePolicy: {}, plugins: [{}] }, 'invalid_runner_options', { field: 'plugins' }],
    ['a policy that does not compile', { runtimePolicy: { maxContentBytes: -1 } }, 'invalid_runner_runtime_policy', { reason: 'invalid_max_content_bytes' }],
  ])('on its own, %s is a typed error', (_label, options, code, details) => {
    expect(() => new AdkSafetyPlugin(options as never)).toThrow(expect.objectContaining({ code, details }));
  });
});

import { summarizeDecision } from '../../policy/policy-decision';
import { RunnerError } from '../../runner/runner.errors';
import { AdkRunnerFacade } from './adk-runner-facade';
import {
  APP,
  auditEvents,
  canary,
  calls,
  countingTool,
  drain,
  expectRunnerError,
  makeFacade,
  message,
  Observers,
  plugin,
  RecordingSessionService,
  ROOT,
  scriptedAgent,
  storedEvents,
  text,
  USER,
} from './testing/adk-harness';

const OPEN = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const } };

/** A model step that waits until the signal it was given aborts. */
const untilAborted = (_request: unknown, signal: AbortSignal | undefined) =>
  new Promise<never>((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));

describe('AdkRunnerFacade: admission, then the agent check, before any ADK code (spec 03 §11.1, §6.1–6.2)', () => {
  it('admission comes first: without capacity the run fails admission_failed and ADK never runs', async () => {
    const observers = new Observers();
    const admission = observers.admission({ globalLimit: 1, overflow: 'reject' });
    const held = await admission.acquire('someone-else');
    const { agent, model } = scriptedAgent(ROOT, [text('hello')]);
    const sessions = new RecordingSessionService();
    const facade = makeFacade({ agent, sessionService: sessions, admission: { controller: admission }, runtimePolicy: { agents: { deny: 'all' } }, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-full', newMessage: message('hi') }));

    expect(expectRunnerError(error, 'admission_failed').details).toEqual({ reason: 'concurrency_limit_reached', limit_scope: 'global' });
    expect(events).toEqual([]);
    // the policy denies every agent, yet no decision was taken: admission ran first
    expect(observers.auditRecords).toEqual([]);
    expect(sessions.calls).toEqual([]);
    expect(model.calls).toBe(0);
    await admission.release(held);
  });

  it('a denied agent gets runtime_policy_denied with the summary; the model is never called and the session gets nothing', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const { agent, model } = scriptedAgent(ROOT, [text('hello')]);
    const sessions = new RecordingSessionService();
    const facade = makeFacade({ agent, sessionService: sessions, admission: { controller: admission }, runtimePolicy: { agents: { allow: ['other'] } }, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-denied', newMessage: message('hi') }));

    const denial = expectRunnerError(error, 'runtime_policy_denied');
    expect(observers.auditRecords).toHaveLength(1);
    const [decision] = observers.auditRecords;
    expect(decision).toMatchObject({ operation: 'agent_invocation', subject: ROOT, outcome: 'deny', reason: 'not_allowed' });
    expect(denial.details).toEqual({ ...summarizeDecision(decision) });
    expect(events).toEqual([]);
    expect(sessions.calls).toEqual([]);
    expect(model.calls).toBe(0);
    expect(admission.status().active).toBe(0);
  });

  it('the input budget is measured on the original message, before ADK adds anything to it', async () => {
    const observers = new Observers();
    const { agent, model } = scriptedAgent(ROOT, [text('hello')]);
    const sessions = new RecordingSessionService();
    const original = { parts: [{ text: 'x'.repeat(50) }] };
    const exact = Buffer.byteLength(JSON.stringify(original));
    const facade = makeFacade({ agent, sessionService: sessions, runtimePolicy: { ...OPEN, maxContentBytes: exact - 1 }, auditSink: observers.auditSink });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-budget', newMessage: original }));

    expectRunnerError(error, 'runtime_policy_denied');
    expect(observers.auditRecords[0]).toMatchObject({ reason: 'content_budget_exceeded', budget: { kind: 'content', limit_bytes: exact - 1 } });
    expect(observers.auditRecords[0].budget.measured_bytes).toBeGreaterThan(exact - 1);
    expect(sessions.calls).toEqual([]);
    expect(model.calls).toBe(0);
    // at the exact size (no role, as given) the same message passes
    const passing = makeFacade({ agent: scriptedAgent('fits', [text('ok')]).agent, runtimePolicy: { ...OPEN, maxContentBytes: exact + 64 } });
    expect((await drain(passing.runAsync({ userId: USER, sessionId: 's-fits', newMessage: original }))).error).toBeUndefined();
    expect(original).toEqual({ parts: [{ text: 'x'.repeat(50) }] });
  });
});

describe('AdkRunnerFacade: ADK runs under an adapter-owned signal, released on every path (spec 03 §11.1)', () => {
  it('a completed run yields the stored events, creates the session when absent and aborts its own signal at the end', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const { agent, model } = scriptedAgent(ROOT, [text('hello there')]);
    const caller = new AbortController();
    const facade = makeFacade({ agent, admission: { controller: admission }, runtimePolicy: OPEN });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-ok', newMessage: message('hi'), signal: caller.signal }));

    expect(error).toBeUndefined();
    expect(events.map((event) => event.content?.parts?.[0]?.text)).toEqual(['hello there']);
    expect((await storedEvents(facade, 's-ok')).map((event) => event.author)).toEqual(['user', ROOT]);
    const [signal] = model.signals;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal).not.toBe(caller.signal);
    expect(signal?.aborted).toBe(true);
    expect(caller.signal.aborted).toBe(false);
    expect(admission.status().active).toBe(0);
  });

  it('the permit is released when the run throws', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const { agent } = scriptedAgent(ROOT, [text('x'.repeat(200))]);
    const facade = makeFacade({ agent, admission: { controller: admission }, runtimePolicy: { ...OPEN, maxContentBytes: 100 } });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-throw', newMessage: message('hi') }));

    expectRunnerError(error, 'runtime_policy_denied');
    expect(admission.status().active).toBe(0);
  });

  it('a consumer that breaks out of the loop cancels the run: ADK stops, its signal aborts, the permit comes back', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    let toolSignal: AbortSignal | undefined;
    const slow = countingTool('slow');
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'slow', id: 'c1' }), text('never')], { tools: [slow.tool] });
    const facade = makeFacade({ agent, admission: { controller: admission }, runtimePolicy: OPEN });

    for await (const event of facade.runAsync({ userId: USER, sessionId: 's-break', newMessage: message('hi') })) {
      expect(admission.status().active).toBe(1);
      toolSignal = model.signals[0];
      expect(event.content?.parts?.[0]?.functionCall?.name).toBe('slow');
      break;
    }

    expect(toolSignal?.aborted).toBe(true);
    expect(admission.status().active).toBe(0);
    expect(slow.executions()).toBe(0);
    expect(model.calls).toBe(1);
  });

  it("an abort of the caller's signal ends the run cancelled {reason}, stores nothing more and releases the permit", async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const caller = new AbortController();
    const { agent } = scriptedAgent(ROOT, [
      (request, signal) => {
        setImmediate(() => caller.abort('user_left'));
        return untilAborted(request, signal);
      },
    ]);
    const facade = makeFacade({ agent, admission: { controller: admission }, runtimePolicy: OPEN });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-abort', newMessage: message('hi'), signal: caller.signal }));

    expect(expectRunnerError(error, 'cancelled').details).toEqual({ reason: 'user_left' });
    expect(events).toEqual([]);
    expect((await storedEvents(facade, 's-abort')).map((event) => event.author)).toEqual(['user']);
    expect(admission.status().active).toBe(0);
  });

  it('an abort while queued for admission removes the entry and ends cancelled, never admission_failed', async () => {
    const observers = new Observers();
    const admission = observers.admission({ globalLimit: 1, overflow: 'queue' });
    const held = await admission.acquire('someone-else');
    const caller = new AbortController();
    const { agent, model } = scriptedAgent(ROOT, [text('late')]);
    const facade = makeFacade({ agent, admission: { controller: admission } });

    const run = drain(facade.runAsync({ userId: USER, sessionId: 's-queued', newMessage: message('hi'), signal: caller.signal }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(admission.status().queue_length).toBe(1);
    caller.abort();
    const { error } = await run;

    expect(expectRunnerError(error, 'cancelled').details).toEqual({ reason: 'aborted' });
    expect(admission.status()).toMatchObject({ active: 1, queue_length: 0 });
    expect(model.calls).toBe(0);
    await admission.release(held);
  });

  it('an already aborted signal never reaches admission', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const acquire = jest.spyOn(admission, 'acquire');
    const facade = makeFacade({ agent: scriptedAgent(ROOT, [text('x')]).agent, admission: { controller: admission } });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-pre', newMessage: message('hi'), signal: AbortSignal.abort('gone') }));

    expect(expectRunnerError(error, 'cancelled').details).toEqual({ reason: 'gone' });
    expect(acquire).not.toHaveBeenCalled();
  });

  it('a throwing release is logged without content and ignored', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    jest.spyOn(admission, 'release').mockImplementation(() => {
      throw new Error('release broke');
    });
    const facade = makeFacade({ agent: scriptedAgent(ROOT, [text('fine')]).agent, admission: { controller: admission }, logger: observers.logger });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-release', newMessage: message('hi') }));

    expect(error).toBeUndefined();
    expect(observers.logLines).toEqual([`AdkRunnerFacade: admission release failed for agent="${ROOT}" (ignored)`]);
  });
});

describe('AdkRunnerFacade: typed errors from ADK hooks come back as RunnerError (spec 03 §11.1)', () => {
  it('a throwing application plugin is plugin_failed {hook, plugin}, rethrown after ADK ended, not ADK\'s wrapped text', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const echo = countingTool('echo');
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'echo' }), text('again'), text('and again')], { tools: [echo.tool] });
    const secret = canary();
    const leaky = plugin('leaky', {
      beforeToolCallback: async () => {
        throw new Error(`the secret is ${secret}`);
      },
    });
    const facade = makeFacade({ agent, plugins: [leaky], admission: { controller: admission }, runtimePolicy: OPEN });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-plugin', newMessage: message('hi') }));

    expect(expectRunnerError(error, 'plugin_failed').details).toEqual({ hook: 'before_tool', plugin: 'leaky' });
    expect((error as Error).message).not.toContain(secret);
    // ADK would have turned the throw into an error event and called the model again
    expect(model.calls).toBe(1);
    expect(events.some((event) => event.errorCode !== undefined)).toBe(false);
    expect(JSON.stringify(await storedEvents(facade, 's-plugin'))).not.toContain(secret);
    expect(echo.executions()).toBe(0);
    expect(admission.status().active).toBe(0);
  });

  it('an audit sink that fails on a tool denial fails the run with runtime_policy_audit_persistence_failed {target}', async () => {
    const wipe = countingTool('wipe');
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'wipe' }), text('after')], { tools: [wipe.tool] });
    const facade = makeFacade({
      agent,
      runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['wipe'] } },
      auditSink: { record: async () => Promise.reject(new Error('disk full')) },
    });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-sink', newMessage: message('hi') }));

    expect(expectRunnerError(error, 'runtime_policy_audit_persistence_failed').details).toEqual({ target: 'audit_sink' });
    expect(wipe.executions()).toBe(0);
    expect(model.calls).toBe(1);
  });

  it('an audit event the session cannot store fails the run with {target: session}, before the sink is asked', async () => {
    const observers = new Observers();
    const sessions = new RecordingSessionService();
    const append = sessions.appendEvent.bind(sessions);
    jest.spyOn(sessions, 'appendEvent').mockImplementation(async (request) => (request.event.author === 'system' ? Promise.reject(new Error('full')) : append(request)));
    const wipe = countingTool('wipe');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'wipe' }), text('after')], { tools: [wipe.tool] });
    const facade = makeFacade({ agent, sessionService: sessions, runtimePolicy: { agents: { allow: 'all' } }, auditSink: observers.auditSink });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-audit-session', newMessage: message('hi') }));

    expect(expectRunnerError(error, 'runtime_policy_audit_persistence_failed').details).toEqual({ target: 'session' });
    expect(observers.auditRecords).toEqual([]);
    expect(wipe.executions()).toBe(0);
  });

  it('a session service that fails is session_store_failed {operation}, its text never copied', async () => {
    const sessions = new RecordingSessionService();
    jest.spyOn(sessions, 'appendEvent').mockRejectedValue(new Error('connection to db-7 lost'));
    const facade = makeFacade({ agent: scriptedAgent(ROOT, [text('x')]).agent, sessionService: sessions });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-store', newMessage: message('hi') }));

    expect(expectRunnerError(error, 'session_store_failed').details).toEqual({ operation: 'append_event' });
    expect((error as Error).message).not.toContain('db-7');
  });

  it("any other exception out of ADK (an agent's own callback) is plugin_failed {hook: 'adk_run'}", async () => {
    const { agent, model } = scriptedAgent(ROOT, [text('x')]);
    agent.beforeAgentCallback.push(() => {
      throw new Error('private detail');
    });
    const facade = makeFacade({ agent });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-adk', newMessage: message('hi') }));

    expect(expectRunnerError(error, 'plugin_failed').details).toEqual({ hook: 'adk_run', plugin: 'adk' });
    expect((error as Error).message).not.toContain('private');
    expect(model.calls).toBe(0);
  });
});

describe('AdkRunnerFacade: bad input gets a typed error, never a crash (00 Errors)', () => {
  const agent = () => scriptedAgent(ROOT, [text('x')]).agent;

  it.each([
    ['not an object', 'nope', 'options'],
    ['no app name', { appName: undefined }, 'appName'],
    ['a long app name', { appName: 'a'.repeat(129) }, 'appName'],
    ['an unknown key', { surprise: true }, 'surprise'],
    ['a session service without methods', { sessionService: {} }, 'sessionService'],
    ['plugins that are not an array', { plugins: {} }, 'plugins'],
    ['two plugins with one name', { plugins: [{ name: 'p' }, { name: 'p' }] }, 'plugins'],
    ['a plugin named like the safety plugin', { plugins: [{ name: 'nest_agent_runtime_safety' }] }, 'plugins'],
    ['a plugin callback that is not a function', { plugins: [{ name: 'p', beforeToolCallback: 1 }] }, 'plugins'],
    ['an audit sink without record', { auditSink: {} }, 'auditSink'],
    ['a logger without warn', { logger: 'console' }, 'logger'],
  ])('%s → invalid_runner_options', (_label, overrides, field) => {
    const options = typeof overrides === 'string' ? overrides : { appName: APP, agent: agent(), sessionService: new RecordingSessionService(), ...overrides };
    let caught: unknown;
    try {
      new AdkRunnerFacade(options as never);
    } catch (error) {
      caught = error;
    }
    expect(expectRunnerError(caught, 'invalid_runner_options').details).toEqual({ field });
  });

  it('an agent that is not an ADK agent is invalid_runner_options {field: agent}', () => {
    expect(() => new AdkRunnerFacade({ appName: APP, agent: { name: 'fake' } as never, sessionService: new RecordingSessionService() })).toThrow(
      expect.objectContaining({ code: 'invalid_runner_options', details: { field: 'agent' } }),
    );
  });

  it.each([
    ['no controller', {}, { field: 'controller' }],
    ['a bad overflow', { controller: new Observers().admission(), overflow: 'drop' }, { field: 'overflow' }],
    ['a negative queue timeout', { controller: new Observers().admission(), queueTimeoutMs: -1 }, { field: 'queueTimeoutMs' }],
    ['an unknown key', { controller: new Observers().admission(), priority: 1 }, { field: 'priority' }],
  ])('admission with %s → invalid_runner_admission_control', (_label, admission, details) => {
    expect(() => makeFacade({ agent: agent(), admission: admission as never })).toThrow(expect.objectContaining({ code: 'invalid_runner_admission_control', details }));
  });

  it('a policy spec that does not compile → invalid_runner_runtime_policy {reason}', () => {
    expect(() => makeFacade({ agent: agent(), runtimePolicy: { tools: { allow: 'some' } } as never })).toThrow(
      expect.objectContaining({ code: 'invalid_runner_runtime_policy', details: { reason: 'invalid_runtime_policy_allow' } }),
    );
  });

  it.each([
    ['not an object', null, 'request'],
    ['no user id', { sessionId: 's', newMessage: message('x') }, 'user_id'],
    ['a user id with a control character', { userId: 'a\u0000', sessionId: 's', newMessage: message('x') }, 'user_id'],
    ['no session id', { userId: USER, newMessage: message('x') }, 'session_id'],
    ['a session id with a slash', { userId: USER, sessionId: 'a/b', newMessage: message('x') }, 'session_id'],
    ['no message', { userId: USER, sessionId: 's' }, 'new_message'],
    ['a message without parts', { userId: USER, sessionId: 's', newMessage: { role: 'user', parts: [] } }, 'new_message'],
    ['a model-authored message', { userId: USER, sessionId: 's', newMessage: { role: 'model', parts: [{ text: 'x' }] } }, 'new_message'],
    ['a string message', { userId: USER, sessionId: 's', newMessage: 'hello' }, 'new_message'],
    ['a signal that is not one', { userId: USER, sessionId: 's', newMessage: message('x'), signal: { aborted: false } }, 'signal'],
    ['an unknown key', { userId: USER, sessionId: 's', newMessage: message('x'), customMetadata: {} }, 'custom_metadata'],
  ])('a request with %s → invalid_run_request {field}', async (_label, request, field) => {
    const observers = new Observers();
    const admission = observers.admission();
    const facade = makeFacade({ agent: agent(), admission: { controller: admission } });

    const { error } = await drain(facade.runAsync(request as never));

    expect(expectRunnerError(error, 'invalid_run_request').details).toEqual({ field });
    expect(admission.status().active).toBe(0);
  });

  it('a message JSON cannot hold is denied invalid_content with a policy, and invalid_run_request without one', async () => {
    const observers = new Observers();
    const bad = { role: 'user', parts: [{ text: 'x', extra: 10n }] };
    const guarded = makeFacade({ agent: agent(), runtimePolicy: OPEN, auditSink: observers.auditSink });
    const open = makeFacade({ agent: agent() });

    const denied = await drain(guarded.runAsync({ userId: USER, sessionId: 's-bad', newMessage: bad as never }));
    const refused = await drain(open.runAsync({ userId: USER, sessionId: 's-bad', newMessage: bad as never }));

    expectRunnerError(denied.error, 'runtime_policy_denied');
    expect(observers.auditRecords[0]?.reason).toBe('invalid_content');
    expect(expectRunnerError(refused.error, 'invalid_run_request').details).toEqual({ field: 'new_message' });
    // and the facade keeps serving
    expect((await drain(open.runAsync({ userId: USER, sessionId: 's-good', newMessage: message('hi') }))).error).toBeUndefined();
  });

  it('the facade does not keep the errors of one run for the next', async () => {
    const { agent: root } = scriptedAgent(ROOT, [text('x'.repeat(300)), text('short')]);
    const facade = makeFacade({ agent: root, runtimePolicy: { ...OPEN, maxContentBytes: 200 } });

    const first = await drain(facade.runAsync({ userId: USER, sessionId: 's-1', newMessage: message('hi') }));
    const second = await drain(facade.runAsync({ userId: USER, sessionId: 's-2', newMessage: message('hi') }));

    expect(RunnerError.isRunnerError(first.error)).toBe(true);
    expect(second.error).toBeUndefined();
    expect(auditEvents(second.events)).toEqual([]);
  });
});

import { createEvent, InMemorySessionService, Runner } from '@google/adk';
import { summarizeDecision } from '../../policy/policy-decision';
import { RunnerError } from '../../runner/runner.errors';
import { BudgetGuardSessionService } from './budget-guard-session-service';
import { APP, auditEvents, decisionOf, drain, expectRunnerError, makeFacade, message, Observers, plugin, ROOT, scriptedAgent, storedEvents, text, USER } from './testing/adk-harness';

const POLICY = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const }, maxContentBytes: 200 };
const inflate = plugin('inflate', { onUserMessageCallback: async () => message('i'.repeat(400)) });

describe('BudgetGuardSessionService: agent_input just before a user-authored event is stored (spec 03 §11.3)', () => {
  it('an onUserMessageCallback replacement over budget is denied: audited, nothing of the message saved, no model call', async () => {
    const observers = new Observers();
    const admission = observers.admission();
    const { agent, model } = scriptedAgent(ROOT, [text('never')]);
    const facade = makeFacade({ agent, plugins: [inflate], admission: { controller: admission }, runtimePolicy: POLICY, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-inflated', newMessage: message('short') }));

    const denial = expectRunnerError(error, 'runtime_policy_denied');
    const stored = await storedEvents(facade, 's-inflated');
    expect(stored.map((event) => event.author)).toEqual(['system']);
    const decision = decisionOf(stored[0]);
    expect(decision).toMatchObject({ operation: 'content', subject: 'agent_input', reason: 'content_budget_exceeded', budget: { limit_bytes: 200 } });
    expect(denial.details).toEqual({ ...summarizeDecision(decision) });
    expect(observers.auditRecords).toEqual([decision]);
    expect(events.map((event) => event.id)).toEqual([stored[0].id]);
    expect(JSON.stringify(stored)).not.toContain('i'.repeat(40));
    expect(model.calls).toBe(0);
    expect(admission.status().active).toBe(0);
  });

  it('a replacement within budget is stored as replaced', async () => {
    const { agent, model } = scriptedAgent(ROOT, [text('ok')]);
    const facade = makeFacade({ agent, plugins: [plugin('polite', { onUserMessageCallback: async () => message('please: short') })], runtimePolicy: POLICY });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-replaced', newMessage: message('short') }));

    expect(error).toBeUndefined();
    const [user] = await storedEvents(facade, 's-replaced');
    expect(user.content?.parts?.[0]?.text).toBe('please: short');
    expect(auditEvents(await storedEvents(facade, 's-replaced'))).toEqual([]);
    expect(model.calls).toBe(1);
  });

  it('on its own under a plain ADK Runner, the deny is thrown out of runAsync as a RunnerError and nothing is saved', async () => {
    const observers = new Observers();
    const inner = new InMemorySessionService();
    await inner.createSession({ appName: APP, userId: USER, sessionId: 's-plain' });
    const sessionService = new BudgetGuardSessionService(inner, { runtimePolicy: POLICY, auditSink: observers.auditSink });
    const { agent, model } = scriptedAgent(ROOT, [text('never')]);
    const runner = new Runner({ appName: APP, agent, sessionService, plugins: [inflate] });

    const { error } = await drain(runner.runAsync({ userId: USER, sessionId: 's-plain', newMessage: message('short') }));

    expect(expectRunnerError(error, 'runtime_policy_denied').details).toMatchObject({ operation: 'content', reason: 'content_budget_exceeded' });
    const stored = (await inner.getSession({ appName: APP, userId: USER, sessionId: 's-plain' }))?.events ?? [];
    expect(stored.map((event) => event.author)).toEqual(['system']);
    expect(observers.auditRecords).toHaveLength(1);
    expect(model.calls).toBe(0);
  });

  it('events not authored by the user pass through unchecked', async () => {
    const observers = new Observers();
    const inner = new InMemorySessionService();
    const session = await inner.createSession({ appName: APP, userId: USER, sessionId: 's-model' });
    const guard = new BudgetGuardSessionService(inner, { runtimePolicy: observers.policy({ maxContentBytes: 10 }) });

    await guard.appendEvent({ session, event: createEvent({ invocationId: 'inv-1', author: ROOT, content: { role: 'model', parts: [{ text: 'a long model answer' }] } }) });

    expect(observers.telemetry).toEqual([]);
    expect(session.events).toHaveLength(1);
  });

  it('every other call is passed through; a failure of the wrapped service is session_store_failed {operation}', async () => {
    const inner = new InMemorySessionService();
    const guard = new BudgetGuardSessionService(inner, { runtimePolicy: POLICY });
    const created = await guard.getOrCreateSession({ appName: APP, userId: USER, sessionId: 's-pass' });
    expect(await guard.getOrCreateSession({ appName: APP, userId: USER, sessionId: 's-pass' })).toMatchObject({ id: created.id });
    expect((await guard.listSessions({ appName: APP, userId: USER })).sessions.map((session) => session.id)).toEqual(['s-pass']);
    await guard.deleteSession({ appName: APP, userId: USER, sessionId: 's-pass' });
    expect(await inner.getSession({ appName: APP, userId: USER, sessionId: 's-pass' })).toBeUndefined();

    for (const [method, operation] of [
      ['createSession', 'create_session'],
      ['getSession', 'get_session'],
      ['listSessions', 'list_sessions'],
      ['deleteSession', 'delete_session'],
    ] as const) {
      jest.spyOn(inner, method).mockRejectedValueOnce(new Error('host db-3 refused'));
      const error = await (guard[method] as (request: object) => Promise<unknown>)({ appName: APP, userId: USER, sessionId: 's-x' }).catch((caught: unknown) => caught);
      expect(expectRunnerError(error, 'session_store_failed').details).toEqual({ operation });
      expect((error as Error).message).not.toContain('db-3');
    }
  });

  it.each([
    ['an inner service without the session methods', {}, { runtimePolicy: POLICY }, { field: 'sessionService' }],
    ['no policy', new InMemorySessionService(), {}, { field: 'runtimePolicy' }],
    ['options that are not an object', new InMemorySessionService(), 'strict', { field: 'options' }],
  ])('%s is invalid_runner_options', (_label, inner, options, details) => {
    let caught: unknown;
    try {
      new BudgetGuardSessionService(inner as never, options as never);
    } catch (error) {
      caught = error;
    }
    expect(RunnerError.isRunnerError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'invalid_runner_options', details });
  });
});

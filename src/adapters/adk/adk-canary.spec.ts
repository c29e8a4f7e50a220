import { calls, canary, countingTool, drain, makeFacade, message, Observers, plugin, ROOT, scriptedAgent, storedEvents, text, USER } from './testing/adk-harness';

const policy = { agents: { allow: 'all' as const }, tools: { allow: ['fetch_page', 'explode', 'search'] }, maxArgumentBytes: 200, maxContentBytes: 400 };

describe('Content never reaches a decision, an audit event or an error (spec 02 §10.4, 03 §6.11, 00 Errors)', () => {
  it('a secret in the prompt, in denied and oversized arguments, in a denied result and in a tool exception stays out of all of them', async () => {
    const secret = canary();
    const observers = new Observers();
    const fetchPage = countingTool('fetch_page', () => ({ body: `${secret}${'b'.repeat(500)}` }));
    const explode = countingTool('explode', () => {
      throw new Error(`failed on ${secret}`);
    });
    const search = countingTool('search');
    const { agent } = scriptedAgent(
      ROOT,
      [
        calls(
          { name: 'leak', args: { secret }, id: 'c1' },
          { name: 'search', args: { q: `${secret}${'q'.repeat(300)}` }, id: 'c2' },
          { name: 'fetch_page', id: 'c3' },
          { name: 'explode', args: { note: secret }, id: 'c4' },
        ),
        text(`final ${secret} ${'f'.repeat(500)}`),
      ],
      { tools: [fetchPage.tool, explode.tool, search.tool, countingTool('leak').tool] },
    );
    const facade = makeFacade({ agent, runtimePolicy: observers.policy(policy), auditSink: observers.auditSink, admission: { controller: observers.admission() } });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-canary', newMessage: message(`my token is ${secret}`) }));

    expect((error as { code?: string }).code).toBe('runtime_policy_denied');
    expect(observers.auditRecords.map((decision) => decision.reason)).toEqual(['not_allowed', 'argument_budget_exceeded', 'content_budget_exceeded', 'content_budget_exceeded']);
    const stored = await storedEvents(facade, 's-canary');
    const audits = stored.filter((event) => event.author === 'system');
    expect(audits).toHaveLength(4);
    expect(JSON.stringify(audits)).not.toContain(secret);
    expect(observers.text()).not.toContain(secret);
    expect(`${String(error)} ${JSON.stringify(error)}`).not.toContain(secret);
    // the stored answers to the model: denial records and the tool_error record, never the secret
    const answers = stored.filter((event) => event.content?.parts?.some((part) => part.functionResponse));
    expect(JSON.stringify(answers)).not.toContain(secret);
    expect(JSON.stringify(events.filter((event) => event.author === 'system'))).not.toContain(secret);
    expect(search.executions() + fetchPage.executions() + explode.executions()).toBe(2);
  });

  it('a secret in an exception of an application plugin is not in the run error', async () => {
    const secret = canary();
    const { agent } = scriptedAgent(ROOT, [text('x')]);
    const leaky = plugin('leaky', {
      beforeModelCallback: async () => {
        throw new Error(secret);
      },
    });
    const facade = makeFacade({ agent, plugins: [leaky], runtimePolicy: policy });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-canary-plugin', newMessage: message('hi') }));

    expect(error).toMatchObject({ code: 'plugin_failed', details: { hook: 'before_model', plugin: 'leaky' } });
    expect(`${String(error)} ${JSON.stringify(error)}`).not.toContain(secret);
    expect(JSON.stringify(await storedEvents(facade, 's-canary-plugin'))).not.toContain(secret);
  });
});

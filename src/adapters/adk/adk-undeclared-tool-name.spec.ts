import { calls, canary, countingTool, drain, makeFacade, message, Observers, ROOT, scriptedAgent, storedEvents, text, USER } from './testing/adk-harness';

describe('the ADK facade and a tool name the model made up (issue 22, item 6)', () => {
  it('ADK refuses the name before any plugin runs: no decision, audit event or log line holds it', async () => {
    const secret = canary();
    const observers = new Observers();
    const shell = countingTool('shell');
    const { agent } = scriptedAgent(ROOT, [calls({ name: 'shell', id: 'c1' }), calls({ name: `user ssn ${secret}`, id: 'c2' }), text('done')], { tools: [shell.tool] });
    const facade = makeFacade({
      agent,
      runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { deny: ['shell'] } }),
      auditSink: observers.auditSink,
      logger: observers.logger,
    });
    const lines: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) => jest.spyOn(console, method).mockImplementation((...args) => void lines.push(args.map(String).join(' '))));

    let outcome: Awaited<ReturnType<typeof drain>>;
    try {
      outcome = await drain(facade.runAsync({ userId: USER, sessionId: 's-undeclared', newMessage: message('go') }));
    } finally {
      for (const spy of spies) spy.mockRestore();
    }

    // ADK answers a name its agent has no tool for with an error event of its own, before any plugin
    // callback: the name stays in ADK's events (the model's call and that answer), the run goes on
    expect(outcome.error).toBeUndefined();
    const holders = outcome.events.filter((event) => JSON.stringify(event).includes(secret));
    expect(holders.map((event) => (event.errorCode === undefined ? 'function_call' : 'adk_error'))).toEqual(['function_call', 'adk_error']);
    expect(shell.executions()).toBe(0);
    // the declared, denied tool keeps its name
    expect(observers.auditRecords.map((decision) => [decision.subject, decision.subject_digest, decision.reason])).toEqual([['shell', null, 'explicitly_denied']]);
    const audits = (await storedEvents(facade, 's-undeclared')).filter((event) => event.author === 'system');
    expect(audits).toHaveLength(1);
    expect(JSON.stringify(audits)).not.toContain(secret);
    expect(observers.text()).not.toContain(secret);
    expect(lines.join('\n')).not.toContain(secret);
  });
});

import { AgentTool, InMemorySessionService, Runner } from '@google/adk';
import { denialRecord } from '../../runner/loop/event-recorder';
import { installAgentGuards } from './agent-guards';
import { APP, auditEvents, calls, decisionOf, drain, makeFacade, message, Observers, responses, ROOT, scriptedAgent, storedEvents, text, USER } from './testing/adk-harness';

const transfer = (agentName: string) => calls({ name: 'transfer_to_agent', args: { agentName }, id: 'transfer' });
const OPEN_TOOLS = { tools: { allow: 'all' as const } };

describe('installAgentGuards (spec 03 §11.4)', () => {
  it('guards every sub-agent below the root, AgentTool agents included, and is idempotent', () => {
    const leaf = scriptedAgent('leaf', []).agent;
    const billing = scriptedAgent('billing', [], { subAgents: [leaf] }).agent;
    const helper = scriptedAgent('helper', []).agent;
    const support = scriptedAgent('support', [], { tools: [new AgentTool({ agent: helper })] }).agent;
    const root = scriptedAgent(ROOT, [], { subAgents: [billing, support] }).agent;
    const before = [root, billing, support, leaf, helper].map((agent) => agent.beforeAgentCallback.length);

    const first = installAgentGuards(root, { runtimePolicy: { agents: { allow: 'all' } } });
    const second = installAgentGuards(root, { runtimePolicy: { agents: { deny: 'all' } } });

    expect([...first].sort()).toEqual(['billing', 'helper', 'leaf', 'support']);
    expect(second).toEqual(first);
    expect([root, billing, support, leaf, helper].map((agent) => agent.beforeAgentCallback.length)).toEqual([before[0], ...before.slice(1).map((count) => count + 1)]);
  });

  it('a denied sub-agent ends without a model call, answering with the denial record after its audit event', async () => {
    const observers = new Observers();
    const billing = scriptedAgent('billing', [text('your invoice')]);
    const root = scriptedAgent(ROOT, [transfer('billing')], { subAgents: [billing.agent] });
    const facade = makeFacade({ agent: root.agent, runtimePolicy: { agents: { allow: [ROOT] }, ...OPEN_TOOLS }, auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-transfer', newMessage: message('invoice please') }));

    expect(error).toBeUndefined();
    expect(billing.model.calls).toBe(0);
    const stored = await storedEvents(facade, 's-transfer');
    const [audit] = auditEvents(stored);
    const decision = decisionOf(audit);
    expect(decision).toMatchObject({ operation: 'agent_invocation', subject: 'billing', reason: 'not_allowed' });
    expect(observers.auditRecords).toEqual([decision]);
    const answer = stored.at(-1);
    expect(answer?.author).toBe('billing');
    expect(JSON.parse(answer?.content?.parts?.[0]?.text ?? '')).toEqual(denialRecord(decision));
    expect(stored.indexOf(audit)).toBe(stored.length - 2);
    expect(events.map((event) => event.author).slice(-2)).toEqual(['system', 'billing']);
  });

  it('an allowed sub-agent runs as usual', async () => {
    const billing = scriptedAgent('billing', [text('your invoice')]);
    const root = scriptedAgent(ROOT, [transfer('billing')], { subAgents: [billing.agent] });
    const facade = makeFacade({ agent: root.agent, runtimePolicy: { agents: { allow: [ROOT, 'billing'] }, ...OPEN_TOOLS } });

    const { events } = await drain(facade.runAsync({ userId: USER, sessionId: 's-allowed', newMessage: message('invoice please') }));

    expect(billing.model.calls).toBe(1);
    expect(events.at(-1)?.content?.parts?.[0]?.text).toBe('your invoice');
  });

  it('an agent behind an AgentTool is checked in its own nested ADK run and answers the tool with the record', async () => {
    const observers = new Observers();
    const helper = scriptedAgent('helper', [text('helped')]);
    const root = scriptedAgent(ROOT, [calls({ name: 'helper', args: { request: 'do it' }, id: 'c1' }), text('done')], { tools: [new AgentTool({ agent: helper.agent })] });
    const facade = makeFacade({ agent: root.agent, runtimePolicy: { agents: { allow: [ROOT] }, ...OPEN_TOOLS }, auditSink: observers.auditSink });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-agent-tool', newMessage: message('help') }));

    expect(error).toBeUndefined();
    expect(helper.model.calls).toBe(0);
    expect(observers.auditRecords.map((decision) => [decision.operation, decision.subject])).toEqual([['agent_invocation', 'helper']]);
    const answer = responses(await storedEvents(facade, 's-agent-tool')).get('c1') as { result: string };
    expect(JSON.parse(answer.result)).toEqual(denialRecord(observers.auditRecords[0]));
  });

  it('outside a facade the guard enforces the options it was last installed with', async () => {
    const billing = scriptedAgent('billing', [text('first'), text('second')]);
    const root = scriptedAgent(ROOT, [transfer('billing'), transfer('billing')], { subAgents: [billing.agent] });
    const sessionService = new InMemorySessionService();
    const runner = new Runner({ appName: APP, agent: root.agent, sessionService });
    const run = async (sessionId: string) => {
      await sessionService.createSession({ appName: APP, userId: USER, sessionId });
      return drain(runner.runAsync({ userId: USER, sessionId, newMessage: message('hi') }));
    };

    installAgentGuards(root.agent, { runtimePolicy: { agents: { allow: 'all' } } });
    await run('s-plain-1');
    installAgentGuards(root.agent, { runtimePolicy: { agents: { deny: ['billing'] } } });
    await run('s-plain-2');

    expect(billing.model.calls).toBe(1);
    const second = (await sessionService.getSession({ appName: APP, userId: USER, sessionId: 's-plain-2' }))?.events ?? [];
    expect(decisionOf(auditEvents(second)[0])).toMatchObject({ subject: 'billing', reason: 'explicitly_denied' });
  });

  it.each([
    ['a root that is not an ADK agent', { name: 'fake' }, { runtimePolicy: {} }, 'invalid_runner_options', { field: 'root' }],
    ['no policy', undefined, {}, 'invalid_runner_options', { field: 'runtimePolicy' }],
    ['an unknown option', undefined, { runtimePolicy: {}, plugins: [] }, 'invalid_runner_options', { field: 'plugins' }],
  ])('%s is a typed error', (_label, root, options, code, details) => {
    expect(() => installAgentGuards((root ?? scriptedAgent(ROOT, []).agent) as never, options as never)).toThrow(expect.objectContaining({ code, details }));
  });
});

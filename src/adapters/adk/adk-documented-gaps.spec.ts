import type { Event, InvocationContext } from '@google/adk';
import { auditEvents, calls, countingTool, drain, makeFacade, message, Observers, plugin, ROOT, scriptedAgent, storedEvents, text, USER } from './testing/adk-harness';

/** Policy decisions seen in telemetry, by operation. */
const operations = (observers: Observers) => observers.telemetry.map((entry) => (entry.payload as { operation: string }).operation);

describe('Documented gaps of the ADK adapter, pinned as they are today (spec 03 §11)', () => {
  it('(a) ADK stores the user message before beforeRunCallback: the recheck sees only what onUserMessageCallback made of it', async () => {
    const observers = new Observers();
    let storedWhenBeforeRunRan: string[] = [];
    const observer = plugin('observer', {
      beforeRunCallback: async ({ invocationContext }: { invocationContext: InvocationContext }) => {
        storedWhenBeforeRunRan = invocationContext.session.events.map((event: Event) => event.author ?? '');
        return undefined;
      },
    });
    const { agent } = scriptedAgent(ROOT, [text('ok')]);
    const facade = makeFacade({ agent, plugins: [observer], runtimePolicy: observers.policy({ agents: { allow: 'all' } }) });

    await drain(facade.runAsync({ userId: USER, sessionId: 's-gap-a', newMessage: message('hello') }));

    expect(storedWhenBeforeRunRan).toEqual(['user']);
    // agent check, agent_input recheck when storing, final output: nothing runs after beforeRunCallback for the input
    expect(operations(observers)).toEqual(['agent_invocation', 'content', 'content']);
  });

  it('(b) a tool name the agent does not know becomes an ADK error event: no decision, no audit event, and ADK keeps looping', async () => {
    const observers = new Observers();
    const echo = countingTool('echo');
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'exfiltrate', id: 'c1' }), text('carried on')], { tools: [echo.tool] });
    const facade = makeFacade({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: ['echo'] } }), auditSink: observers.auditSink });

    const { events, error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-gap-b', newMessage: message('hi') }));

    expect(error).toBeUndefined();
    const stored = await storedEvents(facade, 's-gap-b');
    const errorEvent = stored.find((event) => event.errorCode !== undefined);
    expect(errorEvent).toMatchObject({ author: ROOT, errorCode: 'UNKNOWN_ERROR' });
    expect(operations(observers)).not.toContain('tool_call');
    expect(auditEvents(stored)).toEqual([]);
    expect(observers.auditRecords).toEqual([]);
    expect(model.calls).toBe(2);
    expect(events.at(-1)?.content?.parts?.[0]?.text).toBe('carried on');
  });
});

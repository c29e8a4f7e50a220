import { InMemorySessionService, Runner } from '@google/adk';
import type { AdkContent } from './adk.types';
import { calls, countingTool, decisionOf, auditEvents, drain, makeFacade, message, Observers, responses, ROOT, scriptedAgent, storedEvents, text, USER } from './testing/adk-harness';

/** The function response the model is sent for call `id` in its request `index`. */
function responseSeen(model: ReturnType<typeof scriptedAgent>['model'], index: number, id: string): unknown {
  const contents = model.requests[index].contents as AdkContent[];
  return contents.flatMap((content) => content.parts ?? []).find((part) => part.functionResponse?.id === id)?.functionResponse?.response;
}

describe("A denied ADK tool call reaches the model as a tool error in ADK's own convention (an `error` key)", () => {
  it('answers the call with {success: false, error: {kind, decision summary}}: no result or output key, no arguments', async () => {
    const observers = new Observers();
    const wipe = countingTool('wipe');
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'wipe', id: 'c1', args: { path: '/srv/secret-path' } }), text('done')], { tools: [wipe.tool] });
    const facade = makeFacade({ agent, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: [] } }), auditSink: observers.auditSink });

    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-denial-shape', newMessage: message('hi') }));

    expect(error).toBeUndefined();
    const stored = await storedEvents(facade, 's-denial-shape');
    const { decision_id, policy_id, operation, outcome, reason } = decisionOf(auditEvents(stored)[0]);
    const expected = { success: false, error: { kind: 'runtime_policy_denied', decision_id, policy_id, operation, outcome, reason } };
    expect(responses(stored).get('c1')).toEqual(expected);
    expect(responseSeen(model, 1, 'c1')).toEqual(expected);
    expect(JSON.stringify(responseSeen(model, 1, 'c1'))).not.toContain('secret-path');
    expect(wipe.executions()).toBe(0);
  });

  it('is the key ADK itself answers a failing tool with, when no plugin handles the error: {error: message}', async () => {
    const broken = countingTool('broken', () => {
      throw new Error('tool failed');
    });
    const { agent, model } = scriptedAgent(ROOT, [calls({ name: 'broken', id: 'c1' }), text('done')], { tools: [broken.tool] });
    const runner = new Runner({ appName: 'adk-convention', agent, sessionService: new InMemorySessionService() });
    await runner.sessionService.createSession({ appName: 'adk-convention', userId: USER, sessionId: 's-adk-error' });

    await drain(runner.runAsync({ userId: USER, sessionId: 's-adk-error', newMessage: message('hi') }));

    expect(responseSeen(model, 1, 'c1')).toEqual({ error: expect.stringContaining('tool failed') });
  });
});

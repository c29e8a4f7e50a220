import type { RunnerPlugin } from './agent.types';
import type { SessionEvent } from './session.types';
import { canary, countingTool, decisionOf, drain, errorText, makeRunner, Observers, ofKind, scriptedAgent, storedEvents, USER } from './testing/runner-harness';

const policy = { agents: { allow: 'all' as const }, tools: { allow: ['fetch_page', 'weather', 'explode'] }, maxContentBytes: 400 };

/** A plugin whose observing hooks throw errors carrying the secret, so the logger has something to leak. */
function throwingObservers(secret: string): RunnerPlugin {
  return {
    name: 'leaky',
    afterRunCallback: () => {
      throw new Error(secret);
    },
    onRunErrorCallback: () => {
      throw new Error(secret);
    },
  };
}

/** The events allowed to hold the secret: the user's message and the model's own turn. */
function legitimateHolders(events: readonly SessionEvent[], secret: string): string[] {
  return events.filter((event) => JSON.stringify(event).includes(secret)).map((event) => event.kind);
}

describe('Content never leaks (spec 03 §6.8, §6.11, 00 Errors)', () => {
  it('a secret in the message, denied arguments, invalid arguments, an exception and a denied result stays in the allowed events', async () => {
    const secret = canary();
    const observers = new Observers();
    const fetchPage = countingTool('fetch_page', () => ({ body: `${secret}${'b'.repeat(500)}` }));
    const weather = countingTool('weather', () => 1, { parameters: { type: 'object', properties: { city: { type: 'string' } } } });
    const explode = countingTool('explode', () => {
      throw new Error(`failed on ${secret}`);
    });
    const agent = scriptedAgent(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'leak', args: { secret } },
            { id: 'c2', name: 'fetch_page', args: {} },
            { id: 'c3', name: 'weather', args: { city: { nested: secret } } },
            { id: 'c4', name: 'explode', args: {} },
          ],
        },
        { text: 'nothing to report' },
      ],
      { tools: [fetchPage.tool, weather.tool, explode.tool] },
    );
    const runner = makeRunner({
      agent,
      runtimePolicy: observers.policy(policy),
      auditSink: observers.auditSink,
      events: observers.events,
      logger: observers.logger,
      admission: { controller: observers.admission({}) },
      plugins: [throwingObservers(secret)],
    });

    const { result, error, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-canary', message: `my token is ${secret}` }));

    expect(error).toBeUndefined();
    expect(result?.status).toBe('completed');
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(fetchPage.executions).toHaveLength(1);
    const events = await storedEvents(runner, 'ses-canary');
    expect(legitimateHolders(events, secret)).toEqual(['user_message', 'model_turn']);
    expect(legitimateHolders(streamed, secret)).toEqual(['user_message', 'model_turn']);
    const audits = ofKind(events, 'policy_audit').map(decisionOf);
    expect(audits.map((decision) => decision.subject)).toEqual(['unknown_tool', 'tool_result']);
    expect(JSON.stringify(audits)).not.toContain(secret);
    expect(observers.auditRecords).toHaveLength(2);
    expect(observers.logLines.length).toBeGreaterThan(0);
    expect(observers.telemetry.map((entry) => entry.event)).toEqual(
      expect.arrayContaining(['agent_runtime.policy.decision', 'agent_runtime.admission.decision', 'agent_runtime.runner.invocation']),
    );
    expect(observers.text()).not.toContain(secret);
  });

  it('a secret in a denied final output appears in no event, error, telemetry, audit record or log line', async () => {
    const secret = canary();
    const observers = new Observers();
    const agent = scriptedAgent([{ text: `${secret}${'f'.repeat(500)}` }]);
    const runner = makeRunner({
      agent,
      runtimePolicy: observers.policy(policy),
      auditSink: observers.auditSink,
      events: observers.events,
      logger: observers.logger,
      plugins: [throwingObservers(secret)],
    });

    const { result, error, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-canary-out', message: 'hello' }));

    expect(result).toBeUndefined();
    expect((error as { code: string }).code).toBe('runtime_policy_denied');
    expect(errorText(error)).not.toContain(secret);
    const events = await storedEvents(runner, 'ses-canary-out');
    expect(legitimateHolders(events, secret)).toEqual([]);
    expect(legitimateHolders(streamed, secret)).toEqual([]);
    expect(observers.auditRecords).toHaveLength(1);
    expect(observers.text()).not.toContain(secret);
  });

  it('a secret in a denied user message appears nowhere at all', async () => {
    const secret = canary();
    const observers = new Observers();
    const runner = makeRunner({
      agent: scriptedAgent([{ text: 'never' }]),
      runtimePolicy: observers.policy({ ...policy, maxContentBytes: 32 }),
      auditSink: observers.auditSink,
      events: observers.events,
      logger: observers.logger,
      plugins: [throwingObservers(secret)],
    });

    const { error, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-canary-in', message: `${secret} and more text to overflow` }));

    expect((error as { code: string }).code).toBe('runtime_policy_denied');
    expect(errorText(error)).not.toContain(secret);
    expect(legitimateHolders(await storedEvents(runner, 'ses-canary-in'), secret)).toEqual([]);
    expect(legitimateHolders(streamed, secret)).toEqual([]);
    expect(observers.text()).not.toContain(secret);
  });
});

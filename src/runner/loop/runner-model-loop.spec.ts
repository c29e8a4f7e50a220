import { AdmissionController } from '../../admission/admission-controller';
import { RunnerError } from '../runner.errors';
import type { ScriptedStep } from '../models/scripted-model';
import {
  AGENT,
  canary,
  countingTool,
  countingToolset,
  drain,
  errorText,
  expectError,
  hangingStep,
  makeRunner,
  Observers,
  ofKind,
  scriptedAgent,
  storedEvents,
  until,
  USER,
} from '../testing/runner-harness';

describe('Model calls (spec 03 §3, §6.4)', () => {
  it('the request carries the instruction, the history and the tool declarations', async () => {
    const weather = countingTool('weather', () => 1, { description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } });
    const { toolset } = countingToolset('remote', ['remote_search']);
    const agent = scriptedAgent([{ text: 'ok' }], { instruction: ({ agentName }) => `You are ${agentName}.`, tools: [weather.tool, toolset] });

    await makeRunner({ agent }).run({ userId: USER, message: 'hi' });

    expect(agent.model.calls[0]).toEqual({
      instruction: `You are ${AGENT}.`,
      contents: [{ role: 'user', content: { role: 'user', parts: [{ text: 'hi' }] } }],
      tools: [
        { name: 'weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'remote_search', parameters: { type: 'object' } },
      ],
    });
  });

  it('an exhausted script fails the run model_failed {reason: script_exhausted}', async () => {
    const { error } = await drain(makeRunner({ agent: scriptedAgent([]) }).runAsync({ userId: USER, message: 'hi' }));
    expectError(error, 'model_failed', { reason: 'script_exhausted' });
  });

  it('a model_failed from the model keeps its reason and status', async () => {
    const step: ScriptedStep = () => {
      throw new RunnerError('model_failed', { reason: 'http_status', status: 503 });
    };
    const { error } = await drain(makeRunner({ agent: scriptedAgent([step]) }).runAsync({ userId: USER, message: 'hi' }));
    expectError(error, 'model_failed', { reason: 'http_status', status: 503 });
  });

  it('any other model failure is model_failed {reason: invalid_response} without its text, after onRunErrorCallback', async () => {
    const secret = canary();
    const onRunErrorCallback = jest.fn();
    const step: ScriptedStep = () => {
      throw new Error(secret);
    };
    const { error } = await drain(makeRunner({ agent: scriptedAgent([step]), plugins: [{ name: 'p', onRunErrorCallback }] }).runAsync({ userId: USER, message: 'hi' }));
    expectError(error, 'model_failed', { reason: 'invalid_response' });
    expect(errorText(error)).not.toContain(secret);
    expect(onRunErrorCallback).toHaveBeenCalledWith(expect.objectContaining({ error }));
  });

  it('a malformed response is model_failed {reason: invalid_response}', async () => {
    const { error } = await drain(makeRunner({ agent: scriptedAgent([{ toolCalls: 'not a list' } as never]) }).runAsync({ userId: USER, message: 'hi' }));
    expectError(error, 'model_failed', { reason: 'invalid_response' });
  });

  it('more than maxModelCalls calls is model_call_limit_exceeded {limit}', async () => {
    const loop = { toolCalls: [{ name: 'echo', args: {} }] };
    const agent = scriptedAgent([loop, loop, loop, loop], { tools: [countingTool('echo').tool] });
    const { error } = await drain(makeRunner({ agent, maxModelCalls: 3 }).runAsync({ userId: USER, message: 'hi' }));

    expectError(error, 'model_call_limit_exceeded', { limit: 3 });
    expect(agent.model.calls).toHaveLength(3);
  });

  it('beforeModelCallback may replace the model call and afterModelCallback the response', async () => {
    const skipped = scriptedAgent([], { beforeModelCallback: () => ({ text: 'from callback' }) });
    expect((await makeRunner({ agent: skipped }).run({ userId: USER, message: 'hi' })).output).toEqual({ role: 'model', parts: [{ text: 'from callback' }] });
    expect(skipped.model.calls).toHaveLength(0);

    const rewritten = scriptedAgent([{ text: 'raw' }], { afterModelCallback: ({ response }) => ({ text: `${response.text} (edited)` }) });
    expect((await makeRunner({ agent: rewritten }).run({ userId: USER, message: 'hi' })).output).toEqual({ role: 'model', parts: [{ text: 'raw (edited)' }] });
  });

  it('a completed invocation emits agent_runtime.runner.invocation with counts only', async () => {
    const secret = canary();
    const observers = new Observers();
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: { s: secret } }] }, { text: secret }], { tools: [countingTool('echo').tool] });

    await makeRunner({ agent, events: observers.events }).run({ userId: USER, message: secret });

    const [invocation] = observers.telemetry.filter((entry) => entry.event === 'agent_runtime.runner.invocation');
    expect(invocation.payload).toEqual({ agent_id: AGENT, outcome: 'completed', duration_ms: expect.any(Number), model_calls: 2, tool_calls: 1, policy_denials: 0 });
    expect(observers.text()).not.toContain(secret);
  });
});

describe("The invocation event's sink (the Runner's events, else the request's)", () => {
  const invocationsIn = (observers: Observers) => observers.telemetry.filter((entry) => entry.event === 'agent_runtime.runner.invocation');

  it("a Runner without events reports to the run request's events", async () => {
    const observers = new Observers();
    await makeRunner({ agent: scriptedAgent([{ text: 'ok' }]) }).run({ userId: USER, message: 'hi', events: observers.events });
    expect(invocationsIn(observers).map((entry) => entry.payload)).toEqual([expect.objectContaining({ agent_id: AGENT, outcome: 'completed' })]);
  });

  it("the Runner's own events win over the request's", async () => {
    const own = new Observers();
    const requested = new Observers();
    await makeRunner({ agent: scriptedAgent([{ text: 'ok' }]), events: own.events }).run({ userId: USER, message: 'hi', events: requested.events });
    expect(invocationsIn(own)).toHaveLength(1);
    expect(requested.telemetry).toEqual([]);
  });

  it('refuses request events without emit with invalid_run_request {field: events}', async () => {
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'ok' }]) });
    expectError(await runner.run({ userId: USER, message: 'hi', events: {} as never }).catch((error: unknown) => error), 'invalid_run_request', { field: 'events' });
    expectError((await drain(runner.resumeAsync({ userId: USER, sessionId: 'ses-1', invocationId: 'inv-1', events: 'sink' as never }))).error, 'invalid_run_request', { field: 'events' });
  });
});

describe('The run stream (spec 03 §5)', () => {
  it('yields each event once it is stored, in seq order', async () => {
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'echo', args: {} }] }, { text: 'ok' }], { tools: [countingTool('echo').tool] });
    const runner = makeRunner({ agent });

    const { streamed, result } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-stream', message: 'hi' }));

    expect(result?.status).toBe('completed');
    expect(streamed).toEqual(await storedEvents(runner, 'ses-stream'));
    expect(streamed.map((event) => event.seq)).toEqual([1, 2, 3, 4]);
  });

  it('closing the generator early cancels the invocation and releases its permit', async () => {
    const observers = new Observers();
    const controller = new AdmissionController({ globalLimit: 1 });
    const flag = { started: false } as { started: boolean; signal?: AbortSignal };
    const { toolset, counts } = countingToolset('remote', ['remote_search']);
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'remote_search', args: {} }] }, hangingStep(flag)], { tools: [toolset] });
    const runner = makeRunner({ agent, admission: { controller }, events: observers.events });
    const stream = runner.runAsync({ userId: USER, sessionId: 'ses-close', message: 'hi' });

    const first = await stream.next();
    expect(first.done).toBe(false);
    await until(() => flag.started);
    const closed = await stream.return(undefined as never);

    expect(closed.done).toBe(true);
    expect(flag.signal?.aborted).toBe(true);
    expect(controller.status().active).toBe(0);
    expect(counts.closed).toBe(1);
    expect(ofKind(await storedEvents(runner, 'ses-close'), 'final_output')).toEqual([]);
    const [invocation] = observers.telemetry.filter((entry) => entry.event === 'agent_runtime.runner.invocation');
    expect(invocation.payload).toMatchObject({ outcome: 'cancelled' });
    expect((await stream.next()).done).toBe(true);
  });

  it('a model answer arriving after cancellation is discarded', async () => {
    let answer!: (value: { text: string }) => void;
    const late: ScriptedStep = () => new Promise((resolve) => (answer = resolve));
    const agent = scriptedAgent([late]);
    const runner = makeRunner({ agent });
    const abort = new AbortController();

    const pending = drain(runner.runAsync({ userId: USER, sessionId: 'ses-late', message: 'hi', signal: abort.signal }));
    await until(() => answer !== undefined);
    abort.abort('later');
    answer({ text: 'too late' });
    const { error } = await pending;

    expectError(error, 'cancelled', { reason: 'later' });
    expect((await storedEvents(runner, 'ses-late')).map((event) => event.kind)).toEqual(['user_message']);
  });

  it('an already aborted signal cancels before admission', async () => {
    const controller = new AdmissionController();
    const abort = new AbortController();
    abort.abort('early');
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller } });

    expectError((await drain(runner.runAsync({ userId: USER, sessionId: 'ses-early', message: 'hi', signal: abort.signal }))).error, 'cancelled', { reason: 'early' });
    expect(await runner.sessionService.getSession({ appName: runner.appName, userId: USER, sessionId: 'ses-early' })).toBeUndefined();
    expect(controller.status().active).toBe(0);
  });
});

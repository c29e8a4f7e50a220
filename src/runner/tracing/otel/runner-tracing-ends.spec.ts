import { AdmissionController } from '../../../admission/admission-controller';
import { openTelemetryTracing } from './open-telemetry-tracing';
import { amendToolCall, type Agent, type RunnerPlugin } from '../../agent.types';
import type { RunnerOptions } from '../../runner.types';
import { AGENT, canary, countingTool, expectError, hangingStep, makeRunner, Observers, runnerError, scriptedAgent, until, USER } from '../../testing/runner-harness';
import { eventsNamed, expectErrorSpan, expectOkSpan, SpanRecorder } from './testing/tracing-harness';

type TracedOptions = Partial<RunnerOptions> & { agent: Agent };

function traced(options: TracedOptions) {
  const recorder = new SpanRecorder();
  const runner = makeRunner({ ...options, tracing: openTelemetryTracing({ tracerProvider: recorder.provider }) });
  return { recorder, runner };
}

describe('Span status and errors (issue 14)', () => {
  it('a failing model call: chat and run spans are ERROR with error.type model_failed and the reason code, never the message', async () => {
    const secret = canary();
    const agent = scriptedAgent([
      () => {
        throw new Error(`upstream said ${secret}`);
      },
    ]);
    const { recorder, runner } = traced({ agent });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'model_failed', { reason: 'invalid_response' });

    const [chat] = recorder.byOperation('chat');
    expectErrorSpan(chat, 'model_failed');
    expect(chat.attributes).toMatchObject({ 'agent_runtime.outcome': 'error', 'agent_runtime.reason': 'invalid_response' });
    const root = recorder.root();
    expectErrorSpan(root, 'model_failed');
    expect(root.attributes).toMatchObject({ 'agent_runtime.outcome': 'failed', 'agent_runtime.reason': 'invalid_response' });
    expect(recorder.serialized()).not.toContain(secret);
    expect(recorder.openCount).toBe(0);
  });

  it('a throwing tool: its span is ERROR tool_error while the run completes', async () => {
    const secret = canary();
    const explode = countingTool('explode', () => {
      throw new Error(secret);
    });
    const { recorder, runner } = traced({ agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'explode', args: {} }] }, { text: 'sorry' }], { tools: [explode.tool] }) });

    expect((await runner.run({ userId: USER, message: 'hi' })).status).toBe('completed');

    const [tool] = recorder.byOperation('execute_tool');
    expectErrorSpan(tool, 'tool_error');
    expect(tool.attributes['agent_runtime.outcome']).toBe('error');
    expectOkSpan(recorder.root());
    expect(recorder.serialized()).not.toContain(secret);
  });

  it('a denied agent check: the run span is ERROR runtime_policy_denied with the decision as an event, and no chat span', async () => {
    const observers = new Observers();
    const { recorder, runner } = traced({
      agent: scriptedAgent([{ text: 'never' }]),
      runtimePolicy: observers.policy({ agents: { allow: ['someone_else'] }, tools: { allow: 'all' } }),
      auditSink: observers.auditSink,
    });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'runtime_policy_denied');

    const root = recorder.root();
    expectErrorSpan(root, 'runtime_policy_denied');
    expect(root.attributes).toMatchObject({ 'agent_runtime.outcome': 'failed', 'agent_runtime.reason': 'not_allowed' });
    expect(eventsNamed(root, 'agent_runtime.policy.decision')).toEqual([
      {
        'agent_runtime.policy.operation': 'agent_invocation',
        'agent_runtime.policy.outcome': 'deny',
        'agent_runtime.policy.reason': 'not_allowed',
        'agent_runtime.policy.decision_id': observers.auditRecords[0].decision_id,
      },
    ]);
    expect(recorder.spans).toHaveLength(1);
  });

  it('admission refused: the run span is ERROR admission_failed and its admission event says rejected with the code', async () => {
    const controller = new AdmissionController({ globalLimit: 1, overflow: 'reject' });
    const held = await controller.acquire(AGENT);
    const { recorder, runner } = traced({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller } });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'admission_failed');
    controller.release(held);

    const root = recorder.root();
    expectErrorSpan(root, 'admission_failed');
    expect(root.attributes['agent_runtime.reason']).toBe('concurrency_limit_reached');
    expect(eventsNamed(root, 'agent_runtime.admission')).toEqual([
      { 'agent_runtime.admission.outcome': 'rejected', 'agent_runtime.admission.wait_ms': expect.any(Number), 'agent_runtime.admission.reason': 'concurrency_limit_reached' },
    ]);
  });
});

describe('Spans end on every path (issue 14)', () => {
  it('cancelled while queued for admission: the admission event says aborted, the run span is ERROR cancelled', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const held = await controller.acquire(AGENT);
    const { recorder, runner } = traced({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller, overflow: 'queue', queueTimeoutMs: 'infinity' } });
    const abort = new AbortController();

    const pending = runnerError(runner.run({ userId: USER, message: 'hi', signal: abort.signal }));
    await until(() => controller.status().queue_length === 1);
    abort.abort('user_gave_up');
    expectError(await pending, 'cancelled');
    controller.release(held);

    const root = recorder.root();
    expectErrorSpan(root, 'cancelled');
    expect(root.attributes['agent_runtime.outcome']).toBe('cancelled');
    // a cancel reason is the caller's text, not a code of the package: it is left out
    expect(root.attributes['agent_runtime.reason']).toBeUndefined();
    expect(eventsNamed(root, 'agent_runtime.admission')).toEqual([{ 'agent_runtime.admission.outcome': 'aborted', 'agent_runtime.admission.wait_ms': expect.any(Number) }]);
  });

  it('cancelled during the model call: the chat span ends ERROR cancelled, then the run span', async () => {
    const flag: { started: boolean } = { started: false };
    const { recorder, runner } = traced({ agent: scriptedAgent([hangingStep(flag)]) });
    const abort = new AbortController();

    const pending = runnerError(runner.run({ userId: USER, message: 'hi', signal: abort.signal }));
    await until(() => flag.started);
    expect(recorder.openCount).toBe(2);
    abort.abort();
    expectError(await pending, 'cancelled');

    expect(recorder.openCount).toBe(0);
    expectErrorSpan(recorder.byOperation('chat')[0], 'cancelled');
    expectErrorSpan(recorder.root(), 'cancelled');
  });

  it('a run timeout during a tool call: the open execute_tool span ends ERROR timeout', async () => {
    const started = { value: false };
    const stuck = countingTool('stuck', () => {
      started.value = true;
      return new Promise(() => undefined);
    });
    const { recorder, runner } = traced({ agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'stuck', args: {} }] }], { tools: [stuck.tool] }), runTimeoutMs: 50 });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'timeout');

    expect(started.value).toBe(true);
    expect(recorder.openCount).toBe(0);
    const [tool] = recorder.byOperation('execute_tool');
    expectErrorSpan(tool, 'timeout');
    expect(tool.attributes['agent_runtime.outcome']).toBe('timed_out');
    expectErrorSpan(recorder.root(), 'timeout');
  });

  it('the consumer closing the stream early ends every span (cancelled)', async () => {
    const flag: { started: boolean } = { started: false };
    const { recorder, runner } = traced({ agent: scriptedAgent([hangingStep(flag)]) });

    const stream = runner.runAsync({ userId: USER, message: 'hi' });
    const first = await stream.next();
    expect(first.done).toBe(false);
    await until(() => flag.started);
    await stream.return(undefined as never);

    expect(recorder.openCount).toBe(0);
    expectErrorSpan(recorder.byOperation('chat')[0], 'cancelled');
    expectErrorSpan(recorder.root(), 'cancelled');
  });

  it('a run failing mid-call (a refused plugin amendment) ends the open execute_tool span with the run error', async () => {
    const plugin: RunnerPlugin = { name: 'reroute', beforeToolCallback: ({ args }) => amendToolCall({ args, name: 'other' }) };
    const lookup = countingTool('lookup');
    const { recorder, runner } = traced({ agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'lookup', args: {} }] }], { tools: [lookup.tool] }), plugins: [plugin] });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'invalid_plugin_amendment');

    expect(recorder.openCount).toBe(0);
    const [tool] = recorder.byOperation('execute_tool');
    expect(tool.name).toBe('execute_tool lookup');
    expectErrorSpan(tool, 'invalid_plugin_amendment');
    const root = recorder.root();
    expectErrorSpan(root, 'invalid_plugin_amendment');
    expect(root.attributes['agent_runtime.reason']).toBe('tool_reroute_not_allowed');
  });

  it('a pause ends the call span confirmation_requested and the run span paused; a rejecting resume is a new run span', async () => {
    const transfer = countingTool('transfer', () => ({ done: true }), { requireConfirmation: true });
    const { recorder, runner } = traced({ agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'transfer', args: { amount: 5 } }] }, { text: 'cancelled' }], { tools: [transfer.tool] }) });

    const paused = await runner.run({ userId: USER, sessionId: 'ses-pause', message: 'pay' });
    expect(paused.status).toBe('paused');
    const [pausedRoot] = recorder.byOperation('invoke_agent');
    expect(pausedRoot.attributes['agent_runtime.outcome']).toBe('paused');
    expectOkSpan(pausedRoot);
    const [pending] = recorder.byOperation('execute_tool');
    expect(pending.name).toBe('execute_tool transfer');
    expect(pending.attributes['agent_runtime.outcome']).toBe('confirmation_requested');
    expectOkSpan(pending);

    const resumed = await runner.resume({ userId: USER, sessionId: 'ses-pause', invocationId: paused.invocation_id, callId: 'c1', confirmed: false });
    expect(resumed.status).toBe('completed');

    const roots = recorder.byOperation('invoke_agent');
    expect(roots).toHaveLength(2);
    expect(roots[1].attributes['agent_runtime.invocation_id']).toBe(paused.invocation_id);
    const rejected = recorder.byOperation('execute_tool')[1];
    expect(rejected.name).toBe('execute_tool transfer');
    expect(rejected.attributes['agent_runtime.outcome']).toBe('rejected');
    expectErrorSpan(rejected, 'confirmation_rejected');
    expect(rejected.parentSpanContext?.spanId).toBe(roots[1].spanContext().spanId);
    expect(transfer.executions).toHaveLength(0);
    expect(recorder.openCount).toBe(0);
  });
});

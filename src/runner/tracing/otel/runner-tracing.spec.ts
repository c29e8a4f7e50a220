import { AsyncLocalStorage } from 'node:async_hooks';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { openTelemetryTracing } from './open-telemetry-tracing';
import type { Agent } from '../../agent.types';
import type { RunnerOptions } from '../../runner.types';
import { AGENT, canary, countingTool, makeRunner, Observers, scriptedAgent, USER } from '../../testing/runner-harness';
import { eventsNamed, expectErrorSpan, expectOkSpan, isChildOf, SpanRecorder } from './testing/tracing-harness';

type TracedOptions = Partial<RunnerOptions> & { agent: Agent };
const tracedRunner = (options: TracedOptions) => makeRunner(options);

/** An AsyncLocalStorage context manager, as `@opentelemetry/context-async-hooks` installs one. */
class StorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

describe('OpenTelemetry spans of a run (issue 14)', () => {
  it('a run with a denied and an allowed tool call is one invoke_agent span with chat and execute_tool children', async () => {
    const recorder = new SpanRecorder();
    const observers = new Observers();
    const weather = countingTool('weather', () => ({ forecast: 'sunny' }));
    const deleteAccount = countingTool('delete_account');
    const agent = scriptedAgent(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'delete_account', args: { confirm: true } },
            { id: 'c2', name: 'weather', args: { city: 'Oslo' } },
          ],
          usage: { inputTokens: 11, outputTokens: 5 },
        },
        { text: 'It is sunny.', usage: { inputTokens: 20, outputTokens: 3 } },
      ],
      { tools: [weather.tool, deleteAccount.tool] },
    );
    const runner = tracedRunner({
      agent,
      tracing: openTelemetryTracing({ tracerProvider: recorder.provider }),
      runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: ['weather'] } }),
      auditSink: observers.auditSink,
      admission: { controller: observers.admission({}) },
    });

    const result = await runner.run({ userId: USER, message: 'weather please' });

    expect(result.status).toBe('completed');
    expect(recorder.spans).toHaveLength(5);
    expect(recorder.openCount).toBe(0);
    const root = recorder.root();
    expect(root.name).toBe(`invoke_agent ${AGENT}`);
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': AGENT,
      'agent_runtime.invocation_id': result.invocation_id,
      'agent_runtime.outcome': 'completed',
      'gen_ai.usage.input_tokens': 31,
      'gen_ai.usage.output_tokens': 8,
    });
    expectOkSpan(root);
    const [admission] = eventsNamed(root, 'agent_runtime.admission');
    expect(admission).toEqual({ 'agent_runtime.admission.outcome': 'admitted', 'agent_runtime.admission.wait_ms': expect.any(Number) });
    expect(admission['agent_runtime.admission.wait_ms']).toBeGreaterThanOrEqual(0);
    // the run's own checks, in order: the agent, the input, the final output
    const allow = (operation: string) => ({ 'agent_runtime.policy.operation': operation, 'agent_runtime.policy.outcome': 'allow', 'agent_runtime.policy.reason': 'allowed' });
    expect(eventsNamed(root, 'agent_runtime.policy.decision')).toEqual([allow('agent_invocation'), allow('content'), allow('content')]);

    const chats = recorder.byOperation('chat');
    expect(chats.map((span) => span.name)).toEqual(['chat scripted', 'chat scripted']);
    expect(chats.map((span) => [span.attributes['gen_ai.usage.input_tokens'], span.attributes['gen_ai.usage.output_tokens']])).toEqual([
      [11, 5],
      [20, 3],
    ]);
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(isChildOf(chat, root)).toBe(true);
      expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'scripted', 'gen_ai.agent.name': AGENT, 'agent_runtime.outcome': 'ok' });
      expectOkSpan(chat);
    }

    const tools = recorder.byOperation('execute_tool');
    expect(tools.map((span) => span.name)).toEqual(['execute_tool delete_account', 'execute_tool weather']);
    const [denied, allowed] = tools;
    for (const tool of tools) {
      expect(tool.kind).toBe(SpanKind.INTERNAL);
      expect(isChildOf(tool, root)).toBe(true);
    }
    expect(denied.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.agent.name': AGENT,
      'gen_ai.tool.name': 'delete_account',
      'agent_runtime.outcome': 'denied',
      'agent_runtime.reason': 'not_allowed',
      'error.type': 'runtime_policy_denied',
    });
    expectErrorSpan(denied, 'runtime_policy_denied');
    expect(eventsNamed(denied, 'agent_runtime.policy.decision')).toEqual([
      {
        'agent_runtime.policy.operation': 'tool_call',
        'agent_runtime.policy.outcome': 'deny',
        'agent_runtime.policy.reason': 'not_allowed',
        'agent_runtime.policy.decision_id': observers.auditRecords[0].decision_id,
      },
      // the denial record is a tool response too, checked as one (spec 03 §6.8)
      { 'agent_runtime.policy.operation': 'content', 'agent_runtime.policy.outcome': 'allow', 'agent_runtime.policy.reason': 'allowed' },
    ]);
    expect(allowed.attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.agent.name': AGENT, 'gen_ai.tool.name': 'weather', 'agent_runtime.outcome': 'executed' });
    expectOkSpan(allowed);
    expect(eventsNamed(allowed, 'agent_runtime.policy.decision')).toEqual([
      { 'agent_runtime.policy.operation': 'tool_call', 'agent_runtime.policy.outcome': 'allow', 'agent_runtime.policy.reason': 'allowed' },
      { 'agent_runtime.policy.operation': 'content', 'agent_runtime.policy.outcome': 'allow', 'agent_runtime.policy.reason': 'allowed' },
    ]);
    // the spans are ordered as the calls happened: chat, both tools, chat, then the run
    const started = (span: (typeof tools)[number]) => span.startTime[0] * 1e9 + span.startTime[1];
    expect(started(chats[0]) <= started(denied) && started(denied) <= started(allowed) && started(allowed) <= started(chats[1])).toBe(true);
  });

  it('a secret in the prompt, the tool arguments, the tool results and the output appears in no span name, attribute, event or status', async () => {
    const secret = canary();
    const recorder = new SpanRecorder();
    const observers = new Observers();
    const weather = countingTool('weather', (args) => ({ forecast: `sunny for ${secret}`, echo: args }));
    const explode = countingTool('explode', () => {
      throw new Error(`failed on ${secret}`);
    });
    const agent = scriptedAgent(
      [
        {
          text: `thinking about ${secret}`,
          toolCalls: [
            { id: 'c1', name: 'delete_account', args: { reason: secret } },
            { id: 'c2', name: 'weather', args: { city: secret } },
            { id: 'c3', name: 'explode', args: { with: secret } },
            { id: secret, name: `tool_${secret}`, args: { secret } },
          ],
        },
        { text: `the answer is ${secret}` },
      ],
      { tools: [weather.tool, explode.tool, countingTool('delete_account').tool], instruction: `never say ${secret}` },
    );
    const runner = tracedRunner({
      agent,
      tracing: openTelemetryTracing({ tracerProvider: recorder.provider }),
      runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: ['weather', 'explode', `tool_${secret}`] } }),
      admission: { controller: observers.admission({}) },
    });

    const result = await runner.run({ userId: USER, sessionId: 'ses-canary', message: `my token is ${secret}` });

    // the secret did travel through the run: prompt, arguments, results and output
    expect(weather.executions[0]).toEqual({ city: secret });
    expect(JSON.stringify(result.output)).toContain(secret);
    expect(recorder.spans).toHaveLength(7);
    expect(recorder.serialized()).not.toContain(secret);
    expect(recorder.serialized()).not.toContain(secret.slice('canary-'.length));
    // the serialisation reaches event attributes and status messages, where a leak would sit
    const probe = new SpanRecorder();
    const span = probe.provider.getTracer('probe').startSpan('probe');
    span.addEvent('event', { value: secret });
    span.setStatus({ code: SpanStatusCode.ERROR, message: `status ${secret}` });
    span.end();
    expect(probe.serialized().split(secret)).toHaveLength(5);
    // a tool name the model chose is not shown: the unresolved call's span carries no name
    const unknown = recorder.byOperation('execute_tool').find((span) => span.attributes['agent_runtime.outcome'] === 'not_found');
    expect(unknown?.name).toBe('execute_tool');
    expect(unknown?.attributes['gen_ai.tool.name']).toBeUndefined();
    expectErrorSpan(unknown!, 'tool_not_found');
  });

  it('without a tracerProvider the global provider is used, also one registered after the Runner was built; a run id is an attribute', async () => {
    const recorder = new SpanRecorder();
    const runner = tracedRunner({ agent: scriptedAgent([{ text: 'hi' }]), tracing: openTelemetryTracing() });
    trace.setGlobalTracerProvider(recorder.provider);
    try {
      await runner.run({ userId: USER, message: 'hello', runId: 'run-1' });
    } finally {
      trace.disable();
    }
    expect(recorder.spans.map((span) => span.name)).toEqual(['chat scripted', `invoke_agent ${AGENT}`]);
    expect(recorder.root().attributes['agent_runtime.run_id']).toBe('run-1');
    expect(recorder.spans[0].instrumentationScope.name).toBe('nest-agent-runtime');
  });

  it("without a tracing option (absent or undefined) a Runner traces to the global provider: the app's OpenTelemetry SDK gets spans with no option", async () => {
    const recorder = new SpanRecorder();
    const runners = [tracedRunner({ agent: scriptedAgent([{ text: 'hi' }]) }), tracedRunner({ agent: scriptedAgent([{ text: 'hi' }]), tracing: undefined })];
    trace.setGlobalTracerProvider(recorder.provider);
    try {
      for (const runner of runners) await runner.run({ userId: USER, message: 'hello' });
    } finally {
      trace.disable();
    }
    expect(recorder.spans.map((span) => span.name)).toEqual(['chat scripted', `invoke_agent ${AGENT}`, 'chat scripted', `invoke_agent ${AGENT}`]);
  });

  it('tracing: null starts no span, whatever provider is registered', async () => {
    const recorder = new SpanRecorder();
    trace.setGlobalTracerProvider(recorder.provider);
    try {
      await tracedRunner({ agent: scriptedAgent([{ text: 'hi' }]), tracing: null }).run({ userId: USER, message: 'hello' });
    } finally {
      trace.disable();
    }
    expect(recorder.startedCount).toBe(0);
  });

  describe('context', () => {
    afterEach(() => context.disable());

    it('with a context manager, the run is parented to the active span and the model and the tool run inside their own spans', async () => {
      context.setGlobalContextManager(new StorageContextManager());
      const recorder = new SpanRecorder();
      const seen: { model?: string; tool?: string } = {};
      const lookup = countingTool('lookup', () => {
        seen.tool = trace.getActiveSpan()?.spanContext().spanId;
        return { ok: true };
      });
      const agent = scriptedAgent(
        [
          () => {
            seen.model = trace.getActiveSpan()?.spanContext().spanId;
            return { toolCalls: [{ id: 'c1', name: 'lookup', args: {} }] };
          },
          { text: 'done' },
        ],
        { tools: [lookup.tool] },
      );
      const runner = tracedRunner({ agent, tracing: openTelemetryTracing({ tracerProvider: recorder.provider }) });
      const outer = recorder.provider.getTracer('app').startSpan('POST /runs');

      await context.with(trace.setSpan(context.active(), outer), () => runner.run({ userId: USER, message: 'go' }));
      outer.end();

      const root = recorder.root();
      expect(isChildOf(root, recorder.spans.find((span) => span.name === 'POST /runs')!)).toBe(true);
      expect(seen.model).toBe(recorder.byOperation('chat')[0].spanContext().spanId);
      expect(seen.tool).toBe(recorder.byOperation('execute_tool')[0].spanContext().spanId);
      for (const child of [...recorder.byOperation('chat'), ...recorder.byOperation('execute_tool')]) expect(isChildOf(child, root)).toBe(true);
    });

    it('parallel tool calls are sibling children of the run span', async () => {
      const recorder = new SpanRecorder();
      const slow = (name: string) => countingTool(name, () => new Promise((resolve) => setTimeout(() => resolve({ name }), 20)));
      const [a, b] = [slow('a'), slow('b')];
      const agent = scriptedAgent(
        [
          {
            toolCalls: [
              { id: 'c1', name: 'a', args: {} },
              { id: 'c2', name: 'b', args: {} },
            ],
          },
          { text: 'done' },
        ],
        { tools: [a.tool, b.tool], parallelToolCalls: true },
      );

      await tracedRunner({ agent, tracing: openTelemetryTracing({ tracerProvider: recorder.provider }) }).run({ userId: USER, message: 'go' });

      const root = recorder.root();
      const tools = recorder.byOperation('execute_tool');
      expect(tools.map((span) => span.name).sort()).toEqual(['execute_tool a', 'execute_tool b']);
      for (const tool of tools) expect(isChildOf(tool, root)).toBe(true);
      expect(recorder.openCount).toBe(0);
    });
  });
});

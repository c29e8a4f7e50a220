import type { Agent } from '../../agent.types';
import { resolveRunnerOptions } from '../../runner-options';
import type { RunnerOptions } from '../../runner.types';
import { countingTool, expectError, makeRunner, Observers, scriptedAgent, USER } from '../../testing/runner-harness';
import { SessionServiceDouble } from '../../testing/session-service-double';
import { NO_RUN_TRACER } from '../run-tracer';
import { defaultRunTracer } from './default-run-tracer';
import { openTelemetryTracing } from './open-telemetry-tracing';
import { resolveOtelRunTracer } from './otel-tracer-options';
import type { OpenTelemetryTracingOptions, RunnerTracerProvider } from './open-telemetry-tracing.types';
import { SpanRecorder } from './testing/tracing-harness';

type TracedOptions = Partial<RunnerOptions> & { agent: Agent; tracing?: unknown };
const runnerWith = (tracing: unknown) => makeRunner({ agent: scriptedAgent([{ text: 'hi' }]), tracing } as TracedOptions);
/** A Runner given `tracing` as it is (the Runner refuses anything but a tracer). */
const build = (tracing: unknown) => () => runnerWith(tracing);
/** A Runner with the OpenTelemetry tracer built from `options` (the builder refuses bad options). */
const buildTraced = (options?: unknown) => () => runnerWith(openTelemetryTracing(options as OpenTelemetryTracingOptions));

/** An object whose every method throws, standing for a broken SDK. */
function throwingEverywhere(): object {
  return new Proxy(
    {},
    {
      get: () => () => {
        throw new Error('broken sdk');
      },
    },
  );
}

describe('The tracing option (issue 14)', () => {
  it.each<[string, () => unknown]>([
    ['a string', build('yes')],
    ['a number', build(1)],
    ['true', build(true)],
    ['a provider without getTracer', buildTraced({ tracerProvider: {} })],
    ['an unknown key', buildTraced({ tracerProvider: new SpanRecorder().provider, sampler: 'always' })],
    ['a provider whose getTracer throws', buildTraced({ tracerProvider: { getTracer: () => { throw new Error('nope'); } } })],
    ['a provider whose getTracer returns no tracer', buildTraced({ tracerProvider: { getTracer: () => ({}) } })],
  ])('%s is invalid_runner_options {field: tracing}', (_label, construct) => {
    let thrown: unknown;
    try {
      construct();
    } catch (error) {
      thrown = error;
    }
    expectError(thrown, 'invalid_runner_options', { field: 'tracing' });
  });

  it('a getter for tracerProvider is refused without being called', () => {
    const getter = jest.fn(() => new SpanRecorder().provider);
    let thrown: unknown;
    try {
      buildTraced(Object.defineProperty({}, 'tracerProvider', { get: getter, enumerable: true }))();
    } catch (error) {
      thrown = error;
    }
    expectError(thrown, 'invalid_runner_options', { field: 'tracing' });
    expect(getter).not.toHaveBeenCalled();
  });

  it.each<[string, () => unknown]>([
    ['no options (the global provider)', buildTraced()],
    ['no tracing', build(undefined)],
    ['{}', buildTraced({})],
    ['a provider', buildTraced({ tracerProvider: new SpanRecorder().provider })],
  ])('%s is accepted', (_label, construct) => {
    expect(construct).not.toThrow();
  });

  it('without the API, the tracer is the no-op one with one warning; the default tracer is then a no-op, and warns nothing', () => {
    const warnings: string[] = [];
    const logger = { warn: (line: string) => void warnings.push(line) };
    expect(resolveOtelRunTracer({ logger }, () => null)).toBe(NO_RUN_TRACER);
    let looked = 0;
    const spans = defaultRunTracer(() => (looked++, null)).startRun('a', 'inv-1', undefined);
    defaultRunTracer(() => (looked++, null));
    expect(spans).toBe(NO_RUN_TRACER.startRun('a', 'inv-1', undefined));
    expect(looked).toBe(1);
    expect(warnings).toEqual(['Runner: tracing is enabled but @opentelemetry/api cannot be loaded (no spans)']);
  });

  it('tracing: null is the no-op tracer; no tracing option is the default tracer, which looks for the API only at the first run', () => {
    const base = { appName: 'a', agent: scriptedAgent([]), sessionService: new SessionServiceDouble() };
    expect(resolveRunnerOptions({ ...base, tracing: null }).tracing).toBe(NO_RUN_TRACER);
    expect(resolveRunnerOptions(base).tracing).not.toBe(NO_RUN_TRACER);
  });

  it.each<[string, RunnerTracerProvider]>([
    ['a tracer whose startSpan throws', { getTracer: () => ({ startSpan: () => { throw new Error('broken'); } }) }],
    ['spans whose every method throws', { getTracer: () => ({ startSpan: () => throwingEverywhere() }) }],
  ])('%s never breaks a run', async (_label, tracerProvider) => {
    const observers = new Observers();
    const weather = countingTool('weather');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'weather', args: {} }] }, { text: 'done' }], { tools: [weather.tool] });
    const runner = makeRunner({ agent, tracing: openTelemetryTracing({ tracerProvider }), runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: 'all' } }) });

    const result = await runner.run({ userId: USER, message: 'hi' });

    expect(result.status).toBe('completed');
    expect(weather.executions).toHaveLength(1);
  });
});

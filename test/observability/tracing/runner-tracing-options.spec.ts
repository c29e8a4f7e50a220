import { resolveRunnerTracing } from '../../../src/observability/tracing/runner-tracing-options';
import type { RunnerTracing } from '../../../src/observability/tracing/runner-tracing.types';
import { NO_RUN_TRACER } from '../../../src/observability/tracing/run-spans';
import type { Agent } from '../../../src/runner/agent.types';
import type { RunnerOptions } from '../../../src/runner/runner.types';
import { countingTool, expectError, makeRunner, Observers, scriptedAgent, USER } from '../../runner/runner-harness';
import { SpanRecorder } from './tracing-harness';

type TracedOptions = Partial<RunnerOptions> & { agent: Agent; tracing?: unknown };
const build = (tracing: unknown) => () => makeRunner({ agent: scriptedAgent([{ text: 'hi' }]), tracing } as TracedOptions);

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
  it.each<[string, unknown]>([
    ['a string', 'yes'],
    ['a number', 1],
    ['null', null],
    ['a provider without getTracer', { tracerProvider: {} }],
    ['an unknown key', { tracerProvider: new SpanRecorder().provider, sampler: 'always' }],
    ['a provider whose getTracer throws', { tracerProvider: { getTracer: () => { throw new Error('nope'); } } }],
    ['a provider whose getTracer returns no tracer', { tracerProvider: { getTracer: () => ({}) } }],
  ])('%s is invalid_runner_options {field: tracing}', (_label, tracing) => {
    let thrown: unknown;
    try {
      build(tracing)();
    } catch (error) {
      thrown = error;
    }
    expectError(thrown, 'invalid_runner_options', { field: 'tracing' });
  });

  it('a getter for tracerProvider is refused without being called', () => {
    const getter = jest.fn(() => new SpanRecorder().provider);
    let thrown: unknown;
    try {
      build(Object.defineProperty({}, 'tracerProvider', { get: getter, enumerable: true }))();
    } catch (error) {
      thrown = error;
    }
    expectError(thrown, 'invalid_runner_options', { field: 'tracing' });
    expect(getter).not.toHaveBeenCalled();
  });

  it.each<[string, RunnerTracing]>([
    ['true', true],
    ['false', false],
    ['{}', {}],
    ['a provider', { tracerProvider: new SpanRecorder().provider }],
  ])('%s is accepted', (_label, tracing) => {
    expect(build(tracing)).not.toThrow();
  });

  it('without the API, resolving gives the no-op tracer and one warning', () => {
    const warnings: string[] = [];
    expect(resolveRunnerTracing(true, { warn: (line) => void warnings.push(line) }, () => null)).toBe(NO_RUN_TRACER);
    expect(resolveRunnerTracing(false, { warn: (line) => void warnings.push(line) }, () => null)).toBe(NO_RUN_TRACER);
    expect(warnings).toEqual(['Runner: tracing is enabled but @opentelemetry/api cannot be loaded (no spans)']);
  });

  it.each<[string, object]>([
    ['a tracer whose startSpan throws', { getTracer: () => ({ startSpan: () => { throw new Error('broken'); } }) }],
    ['spans whose every method throws', { getTracer: () => ({ startSpan: () => throwingEverywhere() }) }],
  ])('%s never breaks a run', async (_label, tracerProvider) => {
    const observers = new Observers();
    const weather = countingTool('weather');
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'weather', args: {} }] }, { text: 'done' }], { tools: [weather.tool] });
    const runner = makeRunner({ agent, tracing: { tracerProvider }, runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: 'all' } }) } as TracedOptions);

    const result = await runner.run({ userId: USER, message: 'hi' });

    expect(result.status).toBe('completed');
    expect(weather.executions).toHaveLength(1);
  });
});

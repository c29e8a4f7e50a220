import type * as Harness from '../../../src/runner/testing/runner-harness';
import type * as Tracing from '../../../src/runner/tracing/otel/open-telemetry-tracing';
import { SpanRecorder } from '../../../src/runner/tracing/otel/testing/tracing-harness';

/** A fresh copy of the Runner's module graph in which `require('@opentelemetry/api')` fails, as when the peer is not installed. */
function withoutOtelApi(): { harness: typeof Harness; tracing: typeof Tracing; index: () => unknown; api: () => unknown } {
  let loaded: { harness: typeof Harness; tracing: typeof Tracing; index: () => unknown; api: () => unknown } | undefined;
  jest.isolateModules(() => {
    jest.doMock('@opentelemetry/api', () => {
      throw new Error("Cannot find module '@opentelemetry/api'");
    });
    loaded = {
      harness: require('../../../src/runner/testing/runner-harness') as typeof Harness,
      tracing: require('../../../src/runner/tracing/otel/open-telemetry-tracing') as typeof Tracing,
      index: () => require('../../../src/index'),
      api: () => require('@opentelemetry/api'),
    };
  });
  return loaded!;
}

/** Records and telemetry with their random ids, clocks and durations taken out. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (typeof value !== 'object' || value === null) return value;
  const volatile = /^(invocation_id|decision_id|decided_at_ms|decision_digest|created_at_ms|duration_ms|wait_ms|id|event_id|timestamp_ms)$/;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, volatile.test(key) ? '<volatile>' : comparable(entry)]));
}

describe('Tracing without @opentelemetry/api (issue 14)', () => {
  afterEach(() => jest.dontMock('@opentelemetry/api'));

  it('the package loads without the API: nothing requires it at module load', () => {
    const { index, api } = withoutOtelApi();
    expect(() => index()).not.toThrow();
    expect(() => api()).toThrow("Cannot find module '@opentelemetry/api'");
  });

  it('tracing enabled is a no-op that warns once, and the Runner behaves exactly as without tracing', async () => {
    const { harness, tracing: otel } = withoutOtelApi();
    const recorder = new SpanRecorder();

    async function scenario(tracing: boolean) {
      const observers = new harness.Observers();
      const weather = harness.countingTool('weather', () => ({ forecast: 'sunny' }));
      const agent = harness.scriptedAgent(
        [
          {
            toolCalls: [
              { id: 'c1', name: 'delete_account', args: {} },
              { id: 'c2', name: 'weather', args: { city: 'Oslo' } },
            ],
            usage: { inputTokens: 3, outputTokens: 2 },
          },
          { text: 'sunny' },
        ],
        { tools: [weather.tool, harness.countingTool('delete_account').tool] },
      );
      const options = {
        agent,
        runtimePolicy: observers.policy({ agents: { allow: 'all' }, tools: { allow: ['weather'] } }),
        auditSink: observers.auditSink,
        events: observers.events,
        logger: observers.logger,
        admission: { controller: observers.admission({}) },
        ...(tracing ? { tracing: otel.openTelemetryTracing({ tracerProvider: recorder.provider, logger: observers.logger }) } : {}),
      };
      const runner = harness.makeRunner(options);
      const { result, streamed, error } = await harness.drain(runner.runAsync({ userId: harness.USER, sessionId: 'ses-same', message: 'weather?' }));
      const stored = await harness.storedEvents(runner, 'ses-same');
      return { result, error, streamed, stored, telemetry: observers.telemetry, audits: observers.auditRecords, executions: weather.executions, logLines: observers.logLines };
    }

    const traced = await scenario(true);
    const plain = await scenario(false);

    expect(traced.error).toBeUndefined();
    expect(traced.result?.status).toBe('completed');
    expect(recorder.startedCount).toBe(0);
    expect(traced.logLines).toEqual(['Runner: tracing is enabled but @opentelemetry/api cannot be loaded (no spans)']);
    expect(plain.logLines).toEqual([]);
    const { logLines: _traced, ...tracedRest } = traced;
    const { logLines: _plain, ...plainRest } = plain;
    expect(comparable(tracedRest)).toEqual(comparable(plainRest));
    expect(traced.stored.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit', 'tool_response', 'tool_response', 'final_output']);
  });
});

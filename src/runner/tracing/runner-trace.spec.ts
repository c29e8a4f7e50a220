import { SessionServiceDouble } from '../testing/session-service-double';
import { RunRegistry } from '../runs/run-registry';
import { Runner } from '../runner';
import { ScriptedModel, type ScriptedStep } from '../models/scripted-model';
import type { RunnerOptions } from '../runner.types';
import { ManualClock } from '../../shared/time/manual-clock';
import { TraceStore } from '../../trace/trace-store';
import { sha256Hex } from '../../shared/text/sha256';

const CANARY = 'CANARY-trace-5e1f-secret';
const settle = () => new Promise((resolve) => setImmediate(resolve));

function runnerWith(extra: Partial<RunnerOptions>, steps: ScriptedStep[] = [{ toolCalls: [{ id: 'c1', name: 'lookup', args: { q: CANARY } }] }, { text: `answer ${CANARY}` }]) {
  return new Runner({
    appName: 'trace-app',
    sessionService: new SessionServiceDouble(),
    agent: { name: 'tracer', model: new ScriptedModel(steps, { name: 'scripted-tracer' }), tools: [{ name: 'lookup', execute: () => ({ found: CANARY }) }] },
    runtimePolicy: { agents: { allow: ['tracer'] }, tools: { allow: ['lookup'] } },
    ...extra,
  } as RunnerOptions);
}

async function drainStream(registry: RunRegistry, runId: string): Promise<void> {
  for await (const _item of registry.subscribe(runId)) {
    // read to the terminal item
  }
}

describe('the Runner and the run registry as trace producers (spec 03 §8, §9; 06 §9)', () => {
  test('a query by run_id returns the run lifecycle and the Runner observability events together, without content', async () => {
    const store = new TraceStore();
    const runner = runnerWith({ traceStore: { store } });
    const registry = new RunRegistry({ runners: [runner], traceStore: { store } });
    const { run_id } = await registry.start({ agent: 'tracer', userId: 'u-1', message: `question ${CANARY}` });
    await drainStream(registry, run_id);
    await settle();
    await settle();
    const page = store.query('local-runtime', { run_id });
    const lifecycle = page.events.filter((record) => record.kind === 'workflow_lifecycle').map((record) => [record.event.type, record.event.sequence]);
    expect(lifecycle).toEqual([
      ['run_started', 1],
      ['run_terminal', 2],
    ]);
    const terminal = page.events.find((record) => record.event.type === 'run_terminal');
    expect(terminal?.event).toMatchObject({ workflow_kind: 'agent_run', workflow_id: run_id, run_id, outcome: 'completed', invocation_id: expect.stringMatching(/^inv-/) });
    const names = page.events.filter((record) => record.kind === 'observability').map((record) => record.event.event);
    expect(names).toEqual([
      'runner.run.started',
      'runner.policy.decision',
      'runner.policy.decision',
      'runner.model.call',
      'runner.policy.decision',
      'runner.policy.decision',
      'runner.tool.call',
      'runner.model.call',
      'runner.policy.decision',
      'runner.run.finished',
    ]);
    const tool = page.events.find((record) => record.event.event === 'runner.tool.call');
    expect(tool?.event).toMatchObject({ metadata: { run_id, tool: 'lookup', call_id: 'c1', agent: 'tracer' }, attributes: { outcome: 'executed' } });
    const model = page.events.find((record) => record.event.event === 'runner.model.call');
    expect(model?.event).toMatchObject({ metadata: { model: 'scripted-tracer' }, measurements: { duration_ms: expect.any(Number) } });
    const finished = page.events.find((record) => record.event.event === 'runner.run.finished');
    expect(finished?.event).toMatchObject({ attributes: { outcome: 'completed' } });
    expect(JSON.stringify(page)).not.toContain(CANARY);
    expect(JSON.stringify(store.status())).not.toContain(CANARY);
    expect(store.status().counters).toMatchObject({ content_rejected: 0, lifecycle_delivery_dropped: 0, lifecycle_capability_rejected: 0 });
    store.close();
  });

  test('a denied tool call and a failed run are traced with their outcomes and error type', async () => {
    const store = new TraceStore();
    const runner = runnerWith({ traceStore: { store }, runtimePolicy: { agents: { allow: ['tracer'] }, tools: { deny: ['lookup'] }, maxContentBytes: 10 } as never }, [
      { toolCalls: [{ id: 'c1', name: 'lookup', args: {} }] },
      { text: 'a final text longer than ten bytes' },
    ]);
    await expect(runner.run({ userId: 'u-2', message: 'hi', runId: 'run-denied-1' })).rejects.toMatchObject({ code: 'runtime_policy_denied' });
    await settle();
    const events = store.query('local-runtime', { run_id: 'run-denied-1' }).events.map((record) => record.event);
    expect(events.find((event) => event.event === 'runner.tool.call')).toMatchObject({ attributes: { outcome: 'denied' } });
    expect(events.filter((event) => event.event === 'runner.policy.decision').map((event) => (event.attributes as Record<string, unknown>).status)).toContain('explicitly_denied');
    expect(events.at(-1)).toMatchObject({ event: 'runner.run.finished', attributes: { outcome: 'failed', 'error.type': 'runtime_policy_denied' } });
    store.close();
  });

  test('a tool name the model made up is traced as unknown_tool with its digest; a declared one by name', async () => {
    const store = new TraceStore();
    const invented = `lookup ${CANARY}`;
    const runner = runnerWith({ traceStore: { store }, runtimePolicy: { agents: { allow: ['tracer'] }, tools: { allow: 'all' } } as never }, [
      { toolCalls: [{ id: 'c1', name: invented, args: {} }, { id: 'c2', name: 'lookup', args: {} }, { id: 'c3', name: '', args: {} }] },
      { text: 'done' },
    ]);
    await runner.run({ userId: 'u-4', message: 'hi', runId: 'run-invented-1' });
    await settle();
    const page = store.query('local-runtime', { run_id: 'run-invented-1' });
    const calls = page.events.map((record) => record.event).filter((event) => event.event === 'runner.tool.call');
    expect(calls.map((event) => [event.metadata, event.attributes])).toEqual([
      [expect.objectContaining({ tool: 'unknown_tool', tool_digest: sha256Hex(invented).slice(0, 16), call_id: 'c1' }), { outcome: 'not_found' }],
      [expect.not.objectContaining({ tool_digest: expect.anything() }), { outcome: 'executed' }],
      // no valid name at all: denied invalid_subject (audited as '<invalid>'), traced like any made-up name
      [expect.objectContaining({ tool: 'unknown_tool', tool_digest: sha256Hex('').slice(0, 16), call_id: 'c3' }), { outcome: 'denied' }],
    ]);
    expect((calls[1].metadata as Record<string, unknown>).tool).toBe('lookup');
    expect(JSON.stringify(page)).not.toContain(CANARY);
    store.close();
  });

  test('a closed or saturated store changes neither the result nor the duration of a run', async () => {
    const timeRuns = async (runner: () => Runner) => {
      const started = performance.now();
      const results = [];
      for (let index = 0; index < 20; index += 1) results.push((await runner().run({ userId: 'u-3', message: 'hi' })).status);
      return { results, ms: performance.now() - started };
    };
    const closed = new TraceStore();
    closed.close();
    const saturated = new TraceStore({ maxLifecyclePending: 1 });
    const baseline = await timeRuns(() => runnerWith({}));
    const withClosed = await timeRuns(() => runnerWith({ traceStore: { store: closed } }));
    const withSaturated = await timeRuns(() => runnerWith({ traceStore: { store: saturated } }));
    for (const measured of [withClosed, withSaturated]) {
      expect(measured.results).toEqual(baseline.results);
      // generous: the same work plus scheduling noise, never a wait on the store
      expect(measured.ms).toBeLessThan(baseline.ms * 3 + 200);
    }
    await settle();
    expect(saturated.status().counters.lifecycle_delivery_dropped).toBeGreaterThan(0);
    expect(saturated.status().lifecycle_pending).toBe(0);
    saturated.close();
  });

  test('a receiver refused for capacity is asked for again at the next invocation', async () => {
    const clock = new ManualClock();
    const store = new TraceStore({ maxPrincipals: 1, retentionMs: 1000, pruneIntervalMs: 1000, lifecycleReceiverTtlMs: 1000 }, { clock });
    store.lifecycleReceiver('someone-else');
    const runner = runnerWith({ traceStore: { store, principal: 'tenant-a' } }, [{ text: 'one' }, { text: 'two' }]);
    await expect(runner.run({ userId: 'u-4', message: 'hi' })).resolves.toMatchObject({ status: 'completed' });
    await settle();
    expect(store.principalStatus('tenant-a').events).toBe(0);
    // the other principal's receiver expires and is pruned: the slot is free for the next invocation
    clock.advance(1001);
    store.prune();
    await expect(runner.run({ userId: 'u-4', message: 'hi' })).resolves.toMatchObject({ status: 'completed' });
    await settle();
    expect(store.principalStatus('tenant-a').events).toBeGreaterThan(0);
    store.close();
  });
});

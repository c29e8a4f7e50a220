import { ClusterInstance } from '../../src/cluster/cluster-instance';
import { ScriptedModel } from '../../src/runner/models/scripted-model';
import { Runner } from '../../src/runner/runner';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import { PostgresRunStore } from '../../src/runner/runs/stores/postgres/postgres-run-store';
import type { StoredRun } from '../../src/runner/runs/stores/run-store';
import { PostgresSessionService } from '../../src/services/sessions/postgres-session-service';
import { openDatabaseHarness, useHarness, type DatabaseHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { AGENT, APP, stepTool, steps } from './runs-cluster-harness';

/** Issue 23 item 1, runs part: no run row stays `pending` or `running` on a live instance once the database answers. */

const USER = 'u-1';

/** A gate the step tool waits at until the test opens it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reached = 0;
  return { open, opened, reachedCount: () => reached, hold: async () => void (reached++, await opened) };
}

/**
 * One instance whose run store (and cluster instance) reach Postgres through `proxy`, the host's
 * network, while its sessions use the database directly: a cut fails the run writes only.
 */
async function startInstance(h: DatabaseHarness, proxy: TcpProxy, instanceId: string, model: ScriptedModel, hold: () => Promise<void>) {
  h.track(() => proxy.sever());
  const proxied = await h.dataSource({}, proxy.url);
  const direct = await h.dataSource();
  const instance = new ClusterInstance({ dataSource: proxied, instanceId, backoff: { initialMs: 50, maxMs: 200 } });
  await instance.start();
  const store = new PostgresRunStore({ instance, pollIntervalMs: 50 });
  await store.start();
  const sessions = new PostgresSessionService(direct);
  await sessions.start();
  const runner = new Runner({ appName: APP, agent: { name: AGENT, model, tools: [stepTool([], hold)] }, sessionService: sessions });
  const registry = new RunRegistry({ runners: [runner], store, shutdownGraceMs: 500 });
  h.track(async () => {
    await registry.shutdown().catch(() => undefined);
    await store.stop().catch(() => undefined);
    await sessions.close().catch(() => undefined);
    await instance.stop().catch(() => undefined);
  });
  return { instance, store, registry };
}

/** A run as the store keeps it, stored by a test as if a registry of this instance had started it. */
function storedRun(runId: string, status: StoredRun['status'], overrides: Partial<StoredRun> = {}): StoredRun {
  const now = Date.now();
  return {
    schema_version: 1,
    run_id: runId,
    agent: AGENT,
    session_id: `s-${runId}`,
    invocation_id: `inv-${runId}`,
    status,
    pending_call_ids: status === 'paused' ? ['call-1'] : [],
    created_at_ms: now,
    updated_at_ms: now,
    last_seq: 0,
    error: null,
    user_id: USER,
    owner_principal: null,
    durable: false,
    ...overrides,
  };
}

const statuses = (h: DatabaseHarness) => h.sql<{ run_id: string; status: string; error: unknown }>('SELECT run_id, status, error FROM agent_runtime_runs ORDER BY run_id');

describe('runs: nothing stuck after a database outage (issue 23)', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  it('invocations that end while the run store cannot be reached have their own endings written once it answers: no row stays running', async () => {
    const h = harness();
    const proxy = await startTcpProxy(h.database.url);
    const held = gate();
    const a = await startInstance(h, proxy, 'blink-a', new ScriptedModel([...steps(1, 'a'), ...steps(1, 'b'), ...steps(1, 'c'), { text: 'done' }, { text: 'done' }, { text: 'done' }]), held.hold);
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) runIds.push((await a.registry.start({ agent: AGENT, userId: USER, message: `run ${i}` })).run_id);
    await eventually(() => held.reachedCount() === 3, 15000, 'every run is in its tool');
    await eventually(async () => (await statuses(h)).every((row) => row.status === 'running'), 15000, 'every run is running');

    proxy.cut();
    held.open();
    // the invocations finish now; their terminal writes fail and are repeated
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(a.registry.status().active).toBe(3);
    expect((await statuses(h)).map((row) => row.status)).toEqual(['running', 'running', 'running']);
    proxy.restore();

    // the next attempt comes at most 5 s after the last one
    await eventually(async () => (await statuses(h)).every((row) => row.status !== 'running'), 15_000, 'every run ended');
    // a write commits a moment before its answer reaches the registry
    await eventually(() => a.registry.status().active === 0, 5000, 'the registry to count them ended');
    // the invocations' own endings (their event writes failed first), not the reconciler's owner_lost
    const failed = { status: 'failed', error: { code: 'internal_error', details: {} } };
    for (const runId of runIds) {
      expect(await a.registry.get(runId)).toMatchObject(failed);
      const page = await a.store.itemsAfter(runId, 0);
      expect(page?.items.filter((item) => item.type === 'terminal')).toEqual([{ seq: page?.last_seq, type: 'terminal', ...failed }]);
    }
  });

  it('the reconciler ends a run owned by this live instance whose invocation is gone (owner_lost {reason: execution_lost}); paused and executing runs are left alone', async () => {
    const h = harness();
    const proxy = await startTcpProxy(h.database.url);
    const held = gate();
    const a = await startInstance(h, proxy, 'reconcile-a', new ScriptedModel([...steps(1), { text: 'done' }]), held.hold);
    const { run_id: executing } = await a.registry.start({ agent: AGENT, userId: USER, message: 'go' });
    await eventually(() => held.reachedCount() === 1, 15000, 'the run is in its tool');
    // stored as this instance's own, as if their invocation had ended without its end written
    expect(await a.store.create(storedRun('run-abandoned', 'running'), { maxRuns: 100 })).toBe(true);
    expect(await a.store.create(storedRun('run-abandoned-pending', 'pending'), { maxRuns: 100 })).toBe(true);
    expect(await a.store.create(storedRun('run-paused', 'paused'), { maxRuns: 100 })).toBe(true);

    await eventually(async () => (await statuses(h)).filter((r) => r.status === 'failed').length === 2, 15000, 'the abandoned runs end');
    const ended = { status: 'failed', error: { code: 'owner_lost', details: { reason: 'execution_lost' } } };
    expect(await a.registry.get('run-abandoned')).toMatchObject(ended);
    expect(await a.registry.get('run-abandoned-pending')).toMatchObject(ended);
    const items = await a.store.itemsAfter('run-abandoned', 0);
    expect(items?.items).toEqual([{ seq: 1, type: 'terminal', status: 'failed', error: ended.error }]);
    // many ticks later the executing and the paused runs are untouched
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await a.registry.get(executing)).toMatchObject({ status: 'running' });
    expect(await a.registry.get('run-paused')).toMatchObject({ status: 'paused' });
    held.open();
    await eventually(async () => (await a.registry.get(executing)).status === 'completed', 15000, 'the executing run completes');
  });

  it('the reconciler does nothing while this instance is not live, and ends the abandoned run within a bound once the database answers', async () => {
    const h = harness();
    const proxy = await startTcpProxy(h.database.url);
    const a = await startInstance(h, proxy, 'reconcile-b', new ScriptedModel([]), async () => undefined);
    // after the first ticks, which take over the runs an earlier life of the same id left
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = Date.now();
    await h.sql(
      `INSERT INTO agent_runtime_runs (run_id, agent, user_id, session_id, invocation_id, status, pending_call_ids, error, durable, created_at_ms, updated_at_ms, last_item_seq, oldest_item_seq, owner_instance, owner_principal)
       VALUES ('run-left', $1, $2, 's-1', NULL, 'running', '[]'::jsonb, NULL, false, $3, $3, 0, 1, 'reconcile-b', NULL)`,
      [AGENT, USER, now],
    );
    proxy.cut();
    await eventually(() => !a.instance.live, 15000, 'the instance lost its lock');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await statuses(h)).map((r) => r.status)).toEqual(['running']);
    proxy.restore();
    const back = Date.now();
    await eventually(async () => (await statuses(h))[0].status === 'failed', 10_000, 'the abandoned run ends');
    expect(Date.now() - back).toBeLessThan(8000);
    expect((await statuses(h))[0].error).toEqual({ code: 'owner_lost', details: { reason: 'execution_lost' } });
  });

  it('hands a run to the reconciler only when two rounds in a row find it owned here, unfinished and not executing', async () => {
    const h = harness();
    const dataSource = await h.dataSource();
    const instance = new ClusterInstance({ dataSource, instanceId: 'rounds-a' });
    await instance.start();
    // no tick in this test: the rounds are called one by one
    const store = new PostgresRunStore({ instance, pollIntervalMs: 60_000 });
    await store.start();
    h.track(async () => {
      await store.stop();
      await instance.stop();
    });
    const handed: string[] = [];
    let executing = ['run-x'];
    store.reconcileOwned(
      () => executing,
      (run) => handed.push(run.run_id),
    );
    for (const runId of ['run-x', 'run-y']) {
      const run = storedRun(runId, 'running', { session_id: 's-1', invocation_id: null });
      expect(await store.create(run, { maxRuns: 10 })).toBe(true);
    }
    await store.reconcile();
    expect(handed).toEqual([]);
    await store.reconcile();
    expect(handed).toEqual(['run-y']);
    // run-x stops executing: found once, then handed
    executing = [];
    await store.reconcile();
    expect(handed).toEqual(['run-y', 'run-y']);
    await store.reconcile();
    expect(handed).toEqual(['run-y', 'run-y', 'run-x', 'run-y']);
  });
});

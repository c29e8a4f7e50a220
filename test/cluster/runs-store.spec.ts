import { ClusterInstance } from '../../src/cluster/cluster-instance';
import { PostgresRunStore } from '../../src/runner/runs/stores/postgres/postgres-run-store';
import type { PostgresRunStoreOptions } from '../../src/runner/runs/stores/postgres/postgres-run-store-options';
import { InMemoryRunStore } from '../../src/runner/runs/stores/in-memory-run-store';
import { randomId } from '../../src/shared/ids/random-id';
import { systemClock } from '../../src/shared/time/clock';
import { openDatabaseHarness, useHarness, type DatabaseHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { describeRunStoreContract, storedRun } from '../../src/runner/runs/testing/run-store-contract';

describeRunStoreContract('InMemoryRunStore', async () => {
  let store = new InMemoryRunStore();
  const fixture = {
    get store() {
      return store;
    },
    async reset() {
      store = new InMemoryRunStore();
    },
  };
  return fixture;
});

let shared: DatabaseHarness | undefined;
describeRunStoreContract(
  'PostgresRunStore',
  async () => {
    shared = await openDatabaseHarness();
    const harness = shared;
    const dataSource = await harness.dataSource();
    const instance = new ClusterInstance({ dataSource, instanceId: 'contract-a' });
    await instance.start();
    // records of the contract carry 1970 times: a clock at 0 keeps the periodic prune off them
    const store = new PostgresRunStore({ instance, pollIntervalMs: 50, clock: { ...systemClock, wallNow: () => 0 } });
    await store.start();
    harness.track(async () => {
      await store.stop();
      await instance.stop();
    });
    return { store, reset: async () => void (await harness.sql('DELETE FROM agent_runtime_runs')) };
  },
  async () => shared?.close(),
);

/** One instance on its own DataSource: its cluster instance and its started store. */
async function node(harness: DatabaseHarness, instanceId: string, options: Partial<PostgresRunStoreOptions> = {}) {
  const dataSource = await harness.dataSource();
  const instance = new ClusterInstance({ dataSource, instanceId });
  await instance.start();
  const store = new PostgresRunStore({ instance, pollIntervalMs: 50, ...options });
  await store.start();
  harness.track(async () => {
    await store.stop();
    await instance.stop();
  });
  return { dataSource, instance, store };
}

describe('PostgresRunStore (spec 08 §4)', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  it('validates its tables at start: a changed table is schema_mismatch, and operations before start fail', async () => {
    const h = harness();
    const dataSource = await h.dataSource();
    const instance = new ClusterInstance({ dataSource, instanceId: 'schema-a' });
    await instance.start();
    h.track(() => instance.stop());
    const store = new PostgresRunStore({ instance });
    await expect(store.get('run-x')).rejects.toMatchObject({ code: 'cluster_unavailable', details: { reason: 'not_started' } });
    await h.sql('ALTER TABLE agent_runtime_run_items ADD COLUMN extra text');
    await expect(store.start()).rejects.toMatchObject({ code: 'schema_mismatch' });
    expect(store.connected).toBe(false);
  });

  it('refuses bad options with invalid_cluster_options naming the field', async () => {
    const h = harness();
    const dataSource = await h.dataSource();
    const instance = new ClusterInstance({ dataSource, instanceId: 'options-a' });
    expect(() => new PostgresRunStore({ instance, pollIntervalMs: 1 })).toThrow(expect.objectContaining({ code: 'invalid_cluster_options', details: { field: 'pollIntervalMs' } }));
    expect(() => new PostgresRunStore({ pollIntervalMs: 50 } as never)).toThrow(expect.objectContaining({ details: { field: 'instance' } }));
    expect(() => new PostgresRunStore({ instance, bogus: 1 } as never)).toThrow(expect.objectContaining({ code: 'invalid_cluster_options' }));
  });

  it('records the owner, sends one NOTIFY per item and wakes a watcher on another instance', async () => {
    const h = harness();
    const a = await node(h, 'notify-a', { pollIntervalMs: 60_000 });
    const b = await node(h, 'notify-b', { pollIntervalMs: 60_000 });
    const runId = randomId('run-');
    await a.store.create(storedRun(runId), { maxRuns: 10 });
    expect((await h.sql<{ owner_instance: string }>('SELECT owner_instance FROM agent_runtime_runs WHERE run_id = $1', [runId]))[0].owner_instance).toBe('notify-a');
    let woken = 0;
    b.store.watch(runId, () => woken++);
    await a.store.append(runId, { type: 'resumed' }, { keepItems: 10, patch: { status: 'running', updated_at_ms: 2 } });
    await eventually(() => woken > 0, 5000, 'B hears of the item through NOTIFY');
    expect(b.store.connected).toBe(true);
    // a write that makes the run executing elsewhere moves the owner there
    await b.store.update(runId, { status: 'running', updated_at_ms: 3 });
    expect((await h.sql<{ owner_instance: string }>('SELECT owner_instance FROM agent_runtime_runs WHERE run_id = $1', [runId]))[0].owner_instance).toBe('notify-b');
    // an owned write from an instance that lost the run is refused
    expect((await a.store.append(runId, { type: 'resumed' }, { keepItems: 10, owned: true })).written).toBe(false);
    expect((await b.store.append(runId, { type: 'resumed' }, { keepItems: 10, owned: true })).written).toBe(true);
  });

  it('wakes a watcher by its poll when the notification is lost', async () => {
    const h = harness();
    const a = await node(h, 'poll-a', { pollIntervalMs: 50 });
    const runId = randomId('run-');
    await a.store.create(storedRun(runId, { status: 'running' }), { maxRuns: 10 });
    let woken = 0;
    a.store.watch(runId, () => woken++);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const settled = woken;
    // written behind the store's back: no NOTIFY, no local wake
    await h.sql('UPDATE agent_runtime_runs SET last_item_seq = 1, oldest_item_seq = 1 WHERE run_id = $1', [runId]);
    await h.sql(`INSERT INTO agent_runtime_run_items (run_id, seq, type, payload, created_at_ms) VALUES ($1, 1, 'resumed', '{"type":"resumed"}', 1)`, [runId]);
    await eventually(() => woken > settled, 5000, 'the poll wakes the watcher');
    expect((await a.store.itemsAfter(runId, 0))?.items).toEqual([{ seq: 1, type: 'resumed' }]);
  });

  it('maxRuns counts the runs of every instance', async () => {
    const h = harness();
    const a = await node(h, 'cap-a');
    const b = await node(h, 'cap-b');
    const limits = { maxRuns: 3 };
    expect(await a.store.create(storedRun(randomId('run-')), limits)).toBe(true);
    expect(await b.store.create(storedRun(randomId('run-')), limits)).toBe(true);
    const racing = await Promise.all([a.store, b.store, a.store, b.store].map((store) => store.create(storedRun(randomId('run-')), limits)));
    expect(racing.filter(Boolean)).toHaveLength(1);
    expect(await a.store.countActive()).toBe(3);
    expect(await b.store.countActive()).toBe(3);
  });

  it('prunes finished runs older than the TTL in bounded batches, whoever finished them', async () => {
    const h = harness();
    const a = await node(h, 'prune-a', { pollIntervalMs: 60_000, finishedRunTtlMs: 1000, pruneBatchSize: 7 });
    const now = Date.now();
    for (let i = 0; i < 80; i++) {
      const runId = `run-prune-${String(i).padStart(3, '0')}`;
      const status = i < 75 ? 'completed' : 'running';
      await h.sql(
        `INSERT INTO agent_runtime_runs (run_id, agent, user_id, session_id, status, durable, created_at_ms, updated_at_ms, owner_instance, last_item_seq)
         VALUES ($1, 'assistant', 'u-1', 'ses-1', $2, false, $3, $3, 'gone-instance', 2)`,
        [runId, status, i < 72 ? now - 10_000 : now],
      );
      await h.sql(`INSERT INTO agent_runtime_run_items (run_id, seq, type, payload, created_at_ms) VALUES ($1, 1, 'resumed', '{"type":"resumed"}', 1), ($1, 2, 'resumed', '{"type":"resumed"}', 1)`, [runId]);
    }
    // 72 old finished runs, 7 per statement and 10 statements a tick: 70 now, 2 on the next tick
    expect(await a.store.pruneFinished()).toBe(70);
    expect(await a.store.pruneFinished()).toBe(2);
    expect(await a.store.pruneFinished()).toBe(0);
    const [left] = await h.sql<{ runs: number; items: number }>('SELECT (SELECT count(*)::int FROM agent_runtime_runs) AS runs, (SELECT count(*)::int FROM agent_runtime_run_items) AS items');
    expect(left).toEqual({ runs: 8, items: 16 });
  });

  it('lets exactly one instance take over each run of a dead owner, never a paused one', async () => {
    const h = harness();
    const dead = await node(h, 'orphan-dead');
    const b = await node(h, 'orphan-b', { pollIntervalMs: 60_000 });
    const c = await node(h, 'orphan-c', { pollIntervalMs: 60_000 });
    const ids = Array.from({ length: 6 }, () => randomId('run-'));
    for (const [index, runId] of ids.entries()) await dead.store.create(storedRun(runId, { status: index === 5 ? 'paused' : index % 2 === 0 ? 'running' : 'pending' }), { maxRuns: 10 });
    expect(await b.store.claimOrphans(10)).toEqual([]);
    await dead.store.stop();
    await dead.instance.stop();
    const [fromB, fromC] = await Promise.all([b.store.claimOrphans(10), c.store.claimOrphans(10)]);
    const taken = [...fromB, ...fromC].map((run) => run.run_id).sort();
    expect(taken).toEqual(ids.slice(0, 5).sort());
    expect(await b.store.claimOrphans(10)).toEqual([]);
    expect(await c.store.claimOrphans(10)).toEqual([]);
    const owners = await h.sql<{ owner_instance: string; status: string }>('SELECT owner_instance, status FROM agent_runtime_runs ORDER BY status');
    expect(owners.filter((row) => row.status !== 'paused').every((row) => row.owner_instance === 'orphan-b' || row.owner_instance === 'orphan-c')).toBe(true);
  });
});

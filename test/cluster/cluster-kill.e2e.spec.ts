/**
 * kill -9 of one instance of the reference service in cluster mode (spec 08 §6): separate processes
 * on one database, driven over HTTP.
 */
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { Client } from 'pg';
import { eventually } from '../support/eventually';
import { startClusterNode, type ClusterNode } from './support/cluster-node';

const LIMITS = { ADMISSION_GLOBAL_LIMIT: '4', ADMISSION_AGENT_LIMIT: '2', ADMISSION_OVERFLOW: 'queue', ADMISSION_MAX_QUEUE: '16', ADMISSION_QUEUE_TIMEOUT_MS: '30000' };

describe('cluster mode: kill -9 of an instance (spec 08 §6)', () => {
  let database: FreshDatabase;
  let admin: Client;
  const nodes: ClusterNode[] = [];

  beforeAll(async () => {
    database = await createFreshDatabase();
    admin = new Client({ connectionString: database.url });
    admin.on('error', () => undefined);
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.kill().catch(() => undefined)));
    await admin?.end().catch(() => undefined);
    await database?.drop();
  });

  const rows = async (table: string) => (await admin.query(`SELECT instance_id FROM ${table}`)).rows.map((row: { instance_id: string }) => row.instance_id);

  it('returns the killed instance’s permits and queue entries to the others after its lock grace and margin, within the reap interval after them; no waiter elsewhere is lost, none granted twice', async () => {
    const [a, b] = await Promise.all([startClusterNode(database.url, 'kill-a', LIMITS), startClusterNode(database.url, 'kill-b', LIMITS)]);
    nodes.push(a, b);
    const invoke = (node: ClusterNode, workMs: number) => node.http.send('/agents/k/invoke', { method: 'POST', body: { work_ms: workMs } });
    // A holds both permits of agent k and has one more request queued
    const onA = [invoke(a, 60_000), invoke(a, 60_000)];
    await eventually(async () => (await rows('agent_runtime_admission_permits')).length === 2, 10_000, 'A to hold two permits');
    const queuedOnA = invoke(a, 60_000);
    // B's two requests queue behind them
    const onB = [invoke(b, 50), invoke(b, 50)];
    await eventually(async () => (await rows('agent_runtime_admission_queue')).length === 3, 10_000, 'three queued');
    expect((await rows('agent_runtime_admission_permits')).sort()).toEqual(['kill-a', 'kill-a']);

    const killedAt = Date.now();
    await a.kill();
    const answers = await Promise.all(onB.map((call) => call.result));
    const servedWithin = Date.now() - killedAt;
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    // lockGraceMs (2000) + lockGraceMarginMs (1000) after B first saw A dead, + reapIntervalMs (1000) + one decision:
    // never before the grace and margin, with room for a loaded CI machine after them
    expect(servedWithin).toBeGreaterThanOrEqual(3000);
    expect(servedWithin).toBeLessThan(7000);
    await Promise.all([...onA, queuedOnA].map((call) => call.result.catch(() => undefined)));

    await eventually(async () => (await rows('agent_runtime_admission_permits')).length === 0 && (await rows('agent_runtime_admission_queue')).length === 0, 10_000, 'no rows left');
    const status = await b.http.send('/admission/status').result;
    expect(status.body).toMatchObject({ active: 0, queue_length: 0, instances_live: 1, instance: { active: 0, queued: 0 } });
    const grants = b.lines.filter((line) => line.includes('granted agent="k"'));
    expect(grants).toHaveLength(2);
  }, 90_000);
});

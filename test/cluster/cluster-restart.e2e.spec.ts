/**
 * A real Postgres restart under load with two instances of the reference service in cluster mode,
 * each in its own process (spec 08 §3 "Fail closed", §6): nothing is admitted while the server is
 * down, readiness goes down and comes back, and no admission row is left behind.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { findFreePort, startEmbeddedPostgres, type DatabaseHandle } from '../../src/database/embedded/embedded-postgres';
import { runAgentRuntimeMigrations } from '../../src/database/data-source.factory';
import { eventually } from '../support/eventually';
import { startClusterNode, type ClusterNode } from './support/cluster-node';

const LIMITS = { ADMISSION_GLOBAL_LIMIT: '4', ADMISSION_AGENT_LIMIT: '2', ADMISSION_OVERFLOW: 'queue', ADMISSION_MAX_QUEUE: '64', ADMISSION_QUEUE_TIMEOUT_MS: '5000' };

describe('cluster mode through a Postgres restart (spec 08 §6)', () => {
  let base: string;
  let port: number;
  let server: DatabaseHandle | undefined;
  const nodes: ClusterNode[] = [];
  const start = async () => {
    server = await startEmbeddedPostgres({ dataDir: join(base, 'data'), port, postgresFlags: ['-c', 'fsync=off'] });
    return server.url;
  };

  beforeAll(async () => {
    base = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-restart-'));
    await fs.chmod(base, 0o755);
    port = await findFreePort();
    await runAgentRuntimeMigrations(await start());
  }, 120_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.kill().catch(() => undefined)));
    await server?.stop().catch(() => undefined);
    await fs.rm(base, { recursive: true, force: true });
  });

  async function admissionRows(url: string): Promise<number> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT (SELECT count(*) FROM agent_runtime_admission_permits) + (SELECT count(*) FROM agent_runtime_admission_queue) AS n');
      return Number(rows[0].n);
    } finally {
      await client.end();
    }
  }

  it('admits nothing while the server is down, is not ready, then serves again with no stuck rows', async () => {
    const url = server!.url;
    const [a, b] = await Promise.all([startClusterNode(url, 'restart-a', LIMITS), startClusterNode(url, 'restart-b', LIMITS)]);
    nodes.push(a, b);
    const invoke = (node: ClusterNode, i: number) => node.http.send(`/agents/agent-${i % 3}/invoke`, { method: 'POST', body: { work_ms: 20 } }).result;
    const before = await Promise.all(Array.from({ length: 12 }, (_, i) => invoke(i % 2 ? a : b, i)));
    expect(before.every((answer) => answer.status === 200)).toBe(true);

    await server!.stop();
    const during = await Promise.all(Array.from({ length: 8 }, (_, i) => invoke(i % 2 ? a : b, i)));
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.text).not.toMatch(/agent_runtime_|ECONNREFUSED|password/);
    }
    expect(during.filter((answer) => answer.body?.code === 'admission_store_unavailable').length).toBe(8);
    for (const node of [a, b]) {
      const readiness = await node.http.send('/health/ready').result;
      expect(readiness.status).toBe(503);
      expect(readiness.body.details.cluster.status).toBe('down');
    }

    await start();
    // every part comes back by itself (the ledger's instance lock within its 5 s backoff); the evaluation
    // service stops for good when it loses its ownership lock (spec 05), but it is advisory in cluster mode
    for (const node of [a, b]) await eventually(async () => (await node.http.send('/health/ready').result).status === 200, 30_000, 'readiness after the restart');
    const after = await Promise.all(Array.from({ length: 12 }, (_, i) => invoke(i % 2 ? a : b, i)));
    expect(after.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    await eventually(async () => (await admissionRows(url)) === 0, 10_000, 'no admission rows left');
  }, 120_000);
});

import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgentRuntimeDataSource, runAgentRuntimeMigrations } from '../../src/database/data-source.factory';
import { findFreePort, startEmbeddedPostgres, type DatabaseHandle } from '../../src/database/embedded/embedded-postgres';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import type { InvocationRecord } from '../../src/ledger/invocation-record';
import { ledgerError, META, useLedgerHarness } from '../support/ledger-harness';

const T = 1_000_000;
const OTHER_TOKEN = '00000000-0000-4000-8000-000000000000';

/** A ledger on a DataSource of its own on `url`; closing closes both. */
async function openLedger(url: string, instanceId: string) {
  const dataSource = await createAgentRuntimeDataSource(url).initialize();
  const ledger = new InvocationLedger(dataSource, { instanceId });
  await ledger.start();
  return {
    ledger,
    async close() {
      await ledger.close();
      await dataSource.destroy();
    },
  };
}

/** Writes a claimed, checkpointed invocation with lease end T + 1000; returns its token and record. */
async function writeState(ledger: InvocationLedger): Promise<{ ownerToken: string; record: InvocationRecord }> {
  await ledger.create('inv', META, { step: 0 }, { now: T - 10 });
  const { ownerToken } = await ledger.claim('inv', { leaseMs: 1000, now: T });
  const record = await ledger.checkpoint('inv', ownerToken, { completed_steps: [{ step_id: 's1', response: { ok: true } }] }, { leaseMs: 999, now: T + 1 });
  return { ownerToken, record };
}

/** The fence still decides after the reopen: wrong token stale_owner, right token accepted before the lease end, expired at it. */
async function assertFenceHolds(ledger: InvocationLedger, ownerToken: string, before: InvocationRecord): Promise<void> {
  expect(await ledger.get('inv')).toEqual(before);
  expect(before).toMatchObject({ lease_until_ms: T + 1000, revision: 2, phase: 'running' });
  await ledgerError(ledger.renew('inv', OTHER_TOKEN, { leaseMs: 10, now: T + 2 }), 'stale_owner');
  await ledgerError(ledger.claim('inv', { leaseMs: 10, now: T + 999 }), 'invocation_owned');
  await ledgerError(ledger.checkpoint('inv', ownerToken, { late: true }, { leaseMs: 10, now: T + 1000 }), 'lease_expired');
  expect(await ledger.get('inv')).toEqual(before);
  await expect(ledger.renew('inv', ownerToken, { leaseMs: 10, now: T + 999 })).resolves.toMatchObject({ revision: 3, lease_until_ms: T + 1009 });
}

describe('§6 durability', () => {
  const h = useLedgerHarness();

  /**
   * The database's other backends, read until none is left or 5 s have passed: a backend leaves
   * `pg_stat_activity` only once its process has exited, a moment after the client closed it.
   */
  async function otherBackendsOnceGone(): Promise<unknown[]> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const rows = await h().sql(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
      if (rows.length === 0 || Date.now() > deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('records, checkpoints and lease_until survive closing and reopening every connection, and the fence still holds', async () => {
    const first = await openLedger(h().database.url, 'durable-a');
    const { ownerToken, record } = await writeState(first.ledger);
    await first.close();
    expect(await otherBackendsOnceGone()).toEqual([]);
    const second = await openLedger(h().database.url, 'durable-a');
    try {
      await assertFenceHolds(second.ledger, ownerToken, record);
    } finally {
      await second.close();
    }
  });

  it('records, checkpoints and lease_until survive an embedded-server restart on the same data directory, and the fence still holds', async () => {
    const base = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-ledger-restart-'));
    // the server runs as the postgres OS user when the tests run as root
    await fs.chmod(base, 0o755);
    const options = { dataDir: join(base, 'data'), port: await findFreePort() };
    let server: DatabaseHandle | undefined;
    try {
      server = await startEmbeddedPostgres(options);
      await runAgentRuntimeMigrations(server.url);
      const first = await openLedger(server.url, 'durable-a');
      const { ownerToken, record } = await writeState(first.ledger);
      await first.close();
      await server.stop();
      server = await startEmbeddedPostgres(options);
      const second = await openLedger(server.url, 'durable-a');
      try {
        await assertFenceHolds(second.ledger, ownerToken, record);
      } finally {
        await second.close();
      }
    } finally {
      await server?.stop();
      await fs.rm(base, { recursive: true, force: true });
    }
  }, 180_000);
});

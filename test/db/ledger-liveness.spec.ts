import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { ledgerError, META, serverSql, useLedgerHarness, type LedgerHarness } from '../support/ledger-harness';
import { startTcpProxy } from '../support/tcp-proxy';

const T = 1_000_000;
const LONG_LEASE_MS = 10 * 60_000;

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A ledger on a DataSource of its own whose sessions carry `application_name = name` (one "host"). */
async function host(harness: LedgerHarness, name: string, options = {}, deps = {}, url?: string): Promise<InvocationLedger> {
  const dataSource = await harness.dataSource({ extra: { application_name: name, max: 4 } }, url);
  return harness.ledger(options, deps, dataSource);
}

const sessionsOf = async (harness: LedgerHarness, name: string) =>
  (await harness.sql(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, [name])).length;

describe('§6 instance lock and exactly one winner', () => {
  const h = useLedgerHarness();

  it('an instanceId held by a live instance fails start with ledger_instance_id_in_use; it starts once the holder has closed', async () => {
    const first = await h().ledger({ instanceId: 'worker-1' });
    const second = new InvocationLedger(await h().dataSource(), { instanceId: 'worker-1' });
    await ledgerError(second.start(), 'ledger_instance_id_in_use');
    expect(second.status()).toEqual({ state: 'new', lock_held: false });
    await first.close();
    await second.start();
    expect(second.instanceId).toBe('worker-1');
    await second.close();
  });

  it('16 concurrent claimers on separate connections of 4 instances, one expired record: exactly one winner and 15 invocation_owned, 200 rounds without an exception', async () => {
    const hosts = await Promise.all([0, 1, 2, 3].map((i) => host(h(), `claimer-${i}`)));
    await hosts[0].create('inv', META, null, { now: T });
    const unexpected: unknown[] = [];
    let lastWinner = '';
    for (let round = 1; round <= 200; round++) {
      // every lease of the previous round has ended at this round's now
      const now = T + round * 100;
      const results = await Promise.allSettled(hosts.flatMap((ledger) => [0, 1, 2, 3].map(() => ledger.claim('inv', { leaseMs: 50, now }))));
      const winners = results.filter((result) => result.status === 'fulfilled');
      const losers = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (winners.length !== 1) unexpected.push({ round, winners: winners.length });
      for (const { reason } of losers) if ((reason as { code?: string }).code !== 'invocation_owned') unexpected.push({ round, reason: String(reason) });
      if (winners[0]) lastWinner = (winners[0] as PromiseFulfilledResult<{ ownerToken: string }>).value.ownerToken;
    }
    expect(unexpected).toEqual([]);
    const [row] = await h().sql(`SELECT revision, owner_token FROM agent_runtime_invocations`);
    expect(row).toEqual({ revision: '200', owner_token: lastWinner });
  }, 120_000);

  it('16 concurrent creates of one id: one succeeds, the others get already_exists', async () => {
    const hosts = await Promise.all([0, 1].map((i) => host(h(), `creator-${i}`)));
    const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => hosts[i % 2].create('inv', META, { by: i })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'already_exists' });
  });

  it('a row owned by this same instance is never treated as dead: claim and delete are invocation_owned until the lease ends', async () => {
    const ledger = await h().ledger();
    await ledger.create('inv', META, null);
    await ledger.claim('inv', { leaseMs: LONG_LEASE_MS });
    await ledgerError(ledger.claim('inv', { leaseMs: 10 }), 'invocation_owned');
    await ledgerError(ledger.delete('inv'), 'invocation_owned');
  });
});

describe('§6 owner liveness across hosts', () => {
  const h = useLedgerHarness();

  it('host A vanishes: B cannot claim while A is alive, and claims at once when A is gone, long before the lease ends', async () => {
    const proxy = await startTcpProxy(h().database.url);
    const a = await host(h(), 'ledger-host-a', {}, {}, proxy.url);
    const b = await host(h(), 'ledger-host-b');
    await a.create('inv', META, { step: 1 });
    const claimedByA = await a.claim('inv', { leaseMs: LONG_LEASE_MS });
    await ledgerError(b.claim('inv', { leaseMs: 1000 }), 'invocation_owned');
    await ledgerError(b.delete('inv'), 'invocation_owned');
    await proxy.sever();
    await until(async () => (await sessionsOf(h(), 'ledger-host-a')) === 0);
    const taken = await b.claim('inv', { leaseMs: 1000 });
    expect(taken.invocation).toMatchObject({ owner_instance: b.instanceId, revision: 2, checkpoint: { step: 1 } });
    expect(taken.invocation.updated_at_ms).toBeLessThan(claimedByA.invocation.lease_until_ms - LONG_LEASE_MS / 2);
    await ledgerError(a.checkpoint('inv', claimedByA.ownerToken, { step: 2 }, { leaseMs: 1000 }), 'ledger_unavailable');
  });

  it("several hosts taking over a dead owner's rows at once all succeed: their liveness probes do not block one another", async () => {
    const proxy = await startTcpProxy(h().database.url);
    const a = await host(h(), 'ledger-host-a', {}, {}, proxy.url);
    const takers = [await host(h(), 'ledger-host-b'), await host(h(), 'ledger-host-c')];
    const ids = Array.from({ length: 48 }, (_, i) => `inv-${i}`);
    for (const id of ids) {
      await a.create(id, META, null);
      await a.claim(id, { leaseMs: LONG_LEASE_MS });
    }
    await proxy.sever();
    await until(async () => (await sessionsOf(h(), 'ledger-host-a')) === 0);
    const results = await Promise.allSettled(ids.map((id, i) => takers[i % 2].claim(id, { leaseMs: 1000 })));
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
  });

  it("A's sessions are terminated: B claims at once; A reconnects, retakes its lock, and its next fenced write is stale_owner", async () => {
    const a = await host(h(), 'ledger-host-a', {}, { reconnectBackoff: { initialMs: 1500, maxMs: 1500 } });
    const b = await host(h(), 'ledger-host-b');
    await a.create('inv', META, null);
    const old = await a.claim('inv', { leaseMs: LONG_LEASE_MS });
    await h().sql(`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ledger-host-a'`);
    await until(() => !a.lockHeld);
    const taken = await b.claim('inv', { leaseMs: LONG_LEASE_MS });
    expect(taken.invocation.owner_instance).toBe(b.instanceId);
    await until(() => a.lockHeld);
    await ledgerError(a.checkpoint('inv', old.ownerToken, { step: 'late' }, { leaseMs: 1000 }), 'stale_owner');
    // A is alive again, so B's claim is now protected from A in turn
    await ledgerError(a.claim('inv', { leaseMs: 1000 }), 'invocation_owned');
  });

  it('while the lock connection is lost, claim is ledger_unavailable; the ledger reconnects with backoff and retakes the same lock', async () => {
    const ledger = await host(h(), 'ledger-host-a');
    await ledger.create('inv', META, null);
    const [{ db }] = await h().sql<{ db: string }>('SELECT current_database() AS db');
    await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
    try {
      await h().terminateLockHolders();
      await until(() => !ledger.lockHeld);
      await ledgerError(ledger.claim('inv', { leaseMs: 1000 }), 'ledger_unavailable', { reason: 'instance_lock_not_held' });
      expect(await ledger.get('inv')).toMatchObject({ phase: 'ready' });
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(ledger.lockHeld).toBe(false);
    } finally {
      await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
    }
    await until(() => ledger.lockHeld);
    expect(await h().advisoryLocks()).toHaveLength(1);
    await ledger.claim('inv', { leaseMs: 1000 });
  });

  it("closing an instance makes its running rows claimable by others at once, and deletable", async () => {
    const a = await host(h(), 'ledger-host-a');
    const b = await host(h(), 'ledger-host-b');
    for (const id of ['x', 'y']) {
      await a.create(id, META, null);
      await a.claim(id, { leaseMs: LONG_LEASE_MS });
    }
    await ledgerError(b.claim('x', { leaseMs: 1000 }), 'invocation_owned');
    await a.close();
    await expect(b.claim('x', { leaseMs: 1000 })).resolves.toMatchObject({ invocation: { owner_instance: b.instanceId } });
    expect(await b.delete('y')).toBe(true);
  });
});

import { randomUUID } from 'node:crypto';
import { finishWithRetry } from '../../src/ledger/finish-retry';
import type { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LedgerError } from '../../src/ledger/ledger.errors';
import { LEDGER_OPERATION_EVENT, type LedgerOperationEvent } from '../../src/ledger/ledger.constants';
import { ledgerError, META, rawRow, useLedgerHarness } from '../support/ledger-harness';
import { startTcpProxy } from '../support/tcp-proxy';

const T = 1_000_000;

describe('createAndClaim: create and claim in one statement', () => {
  const h = useLedgerHarness();

  it('inserts the row running under the new claim, revision 1, as create then claim would leave it', async () => {
    const ledger = await h().ledger({ instanceId: 'host-a' });
    const { ownerToken, invocation } = await ledger.createAndClaim('inv', META, { step: 0 }, { leaseMs: 500, now: T });
    expect(invocation).toMatchObject({
      invocation_id: 'inv', phase: 'running', owned: true, owner_instance: 'host-a', lease_until_ms: T + 500, revision: 1,
      created_at_ms: T, updated_at_ms: T, checkpoint: { step: 0 }, outcome: null,
    });
    expect(JSON.stringify(invocation)).not.toContain(ownerToken);
    expect((await rawRow(h(), 'inv'))?.owner_token).toBe(ownerToken);
    const renewed = await ledger.renew('inv', ownerToken, { leaseMs: 500, now: T + 100 });
    expect(renewed.revision).toBe(2);
    const given = randomUUID();
    expect((await ledger.createAndClaim('inv-2', META, null, { leaseMs: 100, ownerToken: given })).ownerToken).toBe(given);
  });

  it('of concurrent callers on one id exactly one wins; the others get already_exists and no row is left unclaimed', async () => {
    const ledgers = [await h().ledger({ instanceId: 'host-a' }), await h().ledger({ instanceId: 'host-b' })];
    const ids = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    const results = await Promise.allSettled(ids.flatMap((id) => [0, 1, 0, 1].map((i) => ledgers[i].createAndClaim(id, META, null, { leaseMs: 60_000 }))));
    const won = results.filter((result) => result.status === 'fulfilled');
    const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(won).toHaveLength(ids.length);
    expect(new Set(lost.map((result) => (result.reason as LedgerError).code))).toEqual(new Set(['already_exists']));
    expect(await h().sql(`SELECT phase, count(*)::int AS n FROM agent_runtime_invocations GROUP BY phase`)).toEqual([{ phase: 'running', n: ids.length }]);
  });

  it('a statement that fails leaves no row behind (no ready orphan)', async () => {
    const ledger = await h().ledger();
    await h().sql(`ALTER TABLE agent_runtime_invocations ADD CONSTRAINT no_long_leases CHECK (lease_until_ms < ${T + 1000})`);
    await ledgerError(ledger.createAndClaim('inv', META, null, { leaseMs: 5000, now: T }), 'ledger_unavailable');
    expect(await rawRow(h(), 'inv')).toBeUndefined();
  });

  it('is refused while the instance lock is not held (no row is written), and validates its own arguments', async () => {
    const ledger = await h().ledger();
    await ledgerError(ledger.createAndClaim('inv', META, null, { leaseMs: 0 }), 'invalid_create_and_claim_arguments');
    await ledgerError(ledger.createAndClaim('inv', { ...META, kind: '' }, null, { leaseMs: 10 }), 'invalid_create_and_claim_arguments');
    await ledgerError(ledger.createAndClaim('inv', META, null, { leaseMs: 10, ownerToken: 'nope' }), 'invalid_create_and_claim_arguments');
    await ledgerError(ledger.createAndClaim('inv', META, null, { leaseMs: 10, extra: 1 } as never), 'invalid_create_and_claim_arguments');
    await h().terminateLockHolders();
    await ledgerError(ledger.createAndClaim('inv', META, null, { leaseMs: 10 }), 'ledger_unavailable', { reason: 'instance_lock_not_held' });
    expect(await rawRow(h(), 'inv')).toBeUndefined();
  });
});

describe('listExpired and recoverExpired: bounded, fenced on the lease', () => {
  const h = useLedgerHarness();

  async function running(ledger: InvocationLedger, count: number, leaseMs: number, prefix = 'inv'): Promise<Map<string, string>> {
    const tokens = new Map<string, string>();
    for (let i = 0; i < count; i++) {
      const id = `${prefix}-${String(i).padStart(4, '0')}`;
      tokens.set(id, (await ledger.createAndClaim(id, META, { i }, { leaseMs: leaseMs + i, now: T })).ownerToken);
    }
    return tokens;
  }

  it('lists running rows whose lease has ended (equality counts as ended), oldest lease first, at most limit', async () => {
    const ledger = await h().ledger();
    await running(ledger, 5, 100);
    await ledger.create('ready-row', META, null, { now: T });
    expect((await ledger.listExpired({ now: T + 101 })).map((record) => record.invocation_id)).toEqual(['inv-0000', 'inv-0001']);
    const limited = await ledger.listExpired({ now: T + 10_000, limit: 3 });
    expect(limited.map((record) => record.lease_until_ms)).toEqual([T + 100, T + 101, T + 102]);
    expect(limited.every((record) => record.phase === 'running' && record.owned)).toBe(true);
    expect(Object.isFrozen(limited)).toBe(true);
    expect(await ledger.listExpired({ now: T + 99 })).toEqual([]);
  });

  it('bounds limit to 1..1000 (default 100) with its own argument code', async () => {
    const ledger = await h().ledger();
    await h().sql(`INSERT INTO agent_runtime_invocations (id, workflow_id, workflow_version, kind, checkpoint, phase, owner_token, owner_instance,
      lease_until_ms, revision, created_at_ms, updated_at_ms)
      SELECT 'bulk-' || g, 'helper', '1', 'agent_run', 'null', 'running', gen_random_uuid(), 'gone', 1 + g, 1, 0, 0 FROM generate_series(1, 1100) g`);
    expect(await ledger.listExpired()).toHaveLength(100);
    expect(await ledger.listExpired({ limit: 1000 })).toHaveLength(1000);
    for (const limit of [0, 1001, 1.5, '10', null]) {
      await ledgerError(ledger.listExpired({ limit } as never), 'invalid_list_expired_arguments');
      await ledgerError(ledger.recoverExpired({ limit } as never), 'invalid_recover_expired_arguments');
    }
    await ledgerError(ledger.listExpired({ now: -1 }), 'invalid_list_expired_arguments');
    expect(await ledger.recoverExpired({ limit: 1000 })).toHaveLength(1000);
    expect(await ledger.recoverExpired()).toHaveLength(100);
    expect(await ledger.recoverExpired()).toHaveLength(0);
  });

  it('uses the running-lease partial index, not a scan of the table', async () => {
    await h().sql(`INSERT INTO agent_runtime_invocations (id, workflow_id, workflow_version, kind, checkpoint, created_at_ms, updated_at_ms, phase)
      SELECT 'done-' || g, 'helper', '1', 'agent_run', 'null', 0, 0, 'completed' FROM generate_series(1, 5000) g`);
    await h().sql('ANALYZE agent_runtime_invocations');
    const plan = await h().sql<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT id FROM agent_runtime_invocations WHERE phase = 'running' AND lease_until_ms <= (SELECT 5) ORDER BY lease_until_ms LIMIT 100`,
    );
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain('agent_runtime_invocations_running_lease_idx');
  });

  it('recovers expired rows to failed with reason lease_expired, without a token; the former owner then gets stale_owner', async () => {
    const ledger = await h().ledger();
    const tokens = await running(ledger, 3, 100);
    const recovered = await ledger.recoverExpired({ now: T + 101 });
    expect(recovered).toEqual(['inv-0000', 'inv-0001']);
    expect(await ledger.get('inv-0000')).toMatchObject({ phase: 'failed', outcome: { reason: 'lease_expired' }, owned: false, owner_instance: null, lease_until_ms: 0, revision: 2, updated_at_ms: T + 101 });
    expect((await rawRow(h(), 'inv-0000'))?.owner_token).toBeNull();
    expect(await ledger.get('inv-0002')).toMatchObject({ phase: 'running', owned: true, revision: 1 });
    await ledgerError(ledger.finish('inv-0000', tokens.get('inv-0000') as string, 'completed', null, undefined, { now: T + 200 }), 'stale_owner');
    const reclaimed = await ledger.claim('inv-0000', { leaseMs: 100 });
    expect(reclaimed.invocation).toMatchObject({ phase: 'running', outcome: null, revision: 3 });
  });

  it('never touches a lease its owner renewed in time, on the database clock', async () => {
    const ledger = await h().ledger();
    const stale = await ledger.createAndClaim('stale', META, null, { leaseMs: 1 });
    const live = await ledger.createAndClaim('live', META, null, { leaseMs: 50 });
    await ledger.renew('live', live.ownerToken, { leaseMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await ledger.listExpired()).map((record) => record.invocation_id)).toEqual(['stale']);
    expect(await ledger.recoverExpired()).toEqual(['stale']);
    expect(await ledger.get('live')).toMatchObject({ phase: 'running', owned: true, revision: 2 });
    await ledger.finish('live', live.ownerToken, 'completed', { ok: true }, undefined);
    expect(stale.invocation.phase).toBe('running');
  });

  it('a renewal that commits while the sweep waits for the row is seen: the sweep skips the row', async () => {
    const ledger = await h().ledger();
    const { ownerToken } = await ledger.createAndClaim('inv', META, null, { leaseMs: 100, now: T });
    // another session holds the row lock, as a renewing owner would inside its statement
    await h().sql('BEGIN');
    await h().sql(`UPDATE agent_runtime_invocations SET lease_until_ms = $1 WHERE id = 'inv'`, [T + 10_000]);
    expect(await ledger.recoverExpired({ now: T + 500 })).toEqual([]);
    await h().sql('COMMIT');
    expect(await ledger.recoverExpired({ now: T + 500 })).toEqual([]);
    expect(await ledger.renew('inv', ownerToken, { leaseMs: 100, now: T + 600 })).toMatchObject({ phase: 'running' });
  });
});

describe('finishWithRetry on a real ledger', () => {
  const h = useLedgerHarness();

  it('treats the stale_owner of a retry as done when the earlier attempt committed (its answer lost) with the same phase', async () => {
    const ledger = await h().ledger();
    const { ownerToken } = await ledger.createAndClaim('inv', META, null, { leaseMs: 60_000 });
    let calls = 0;
    const answerLost = {
      get: (id: string) => ledger.get(id),
      finish: async (...args: Parameters<InvocationLedger['finish']>) => {
        calls += 1;
        const record = await ledger.finish(...args);
        if (calls === 1) throw new LedgerError('transaction_aborted', { sqlstate: null, socket_error: 'ECONNRESET' });
        return record;
      },
    };
    const record = await finishWithRetry(answerLost, 'inv', ownerToken, 'completed', { n: 1 }, undefined, { initialDelayMs: 1 });
    expect(calls).toBe(2);
    expect(record).toMatchObject({ phase: 'completed', outcome: { n: 1 }, revision: 2, owned: false });
  });

  it('throws stale_owner when another writer ended the invocation in another phase meanwhile', async () => {
    const ledger = await h().ledger();
    const { ownerToken } = await ledger.createAndClaim('inv', META, null, { leaseMs: 1 });
    let calls = 0;
    const outage = {
      get: (id: string) => ledger.get(id),
      finish: async (...args: Parameters<InvocationLedger['finish']>) => {
        calls += 1;
        if (calls === 1) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          await ledger.recoverExpired();
          throw new LedgerError('ledger_unavailable', { sqlstate: '57P03', socket_error: null });
        }
        return ledger.finish(...args);
      },
    };
    await ledgerError(finishWithRetry(outage, 'inv', ownerToken, 'completed', null, undefined, { initialDelayMs: 1 }), 'stale_owner');
    expect(await ledger.get('inv')).toMatchObject({ phase: 'failed', outcome: { reason: 'lease_expired' } });
  });

  it('gives up after the attempts when the database stays away, within the time bound', async () => {
    const proxy = await startTcpProxy(h().database.url);
    const events: LedgerOperationEvent[] = [];
    const ledger = await h().ledger({}, { events: { emit: (name: string, event: LedgerOperationEvent) => (name === LEDGER_OPERATION_EVENT && events.push(event), true) } }, await h().dataSource({}, proxy.url));
    const { ownerToken } = await ledger.createAndClaim('inv', META, null, { leaseMs: 60_000 });
    await proxy.sever();
    const startedAt = Date.now();
    const error = await finishWithRetry(ledger, 'inv', ownerToken, 'completed', null, undefined, { attempts: 3, initialDelayMs: 50, maxElapsedMs: 2000 }).catch((e: unknown) => e);
    const elapsed = Date.now() - startedAt;
    expect(LedgerError.isLedgerError(error) && ['transaction_aborted', 'ledger_unavailable'].includes(error.code)).toBe(true);
    expect(events.filter((event) => event.operation === 'finish')).toHaveLength(3);
    expect(elapsed).toBeLessThan(2000 + 3 * 2500);
    expect(await ledger.listExpired({ now: Date.now() + 120_000 }).catch(() => 'unreachable')).toBe('unreachable');
    expect(await h().sql(`SELECT phase FROM agent_runtime_invocations WHERE id = 'inv'`)).toEqual([{ phase: 'running' }]);
  });
});

import type { DataSource } from 'typeorm';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import type { InvocationRecord } from '../../src/ledger/invocation-record';
import { LEDGER_OPERATION_EVENT, type LedgerOperationEvent } from '../../src/ledger/ledger.constants';
import { LedgerError } from '../../src/ledger/ledger.errors';
import { ledgerError, META, useLedgerHarness } from '../support/ledger-harness';

const T = 1_000_000;
const CANARY = 'CANARY-7f3a-checkpoint-content';

/** Waits until `sql` returns a row whose `ok` is true. */
async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('§5 lifecycle: start, close and the handle', () => {
  const h = useLedgerHarness();

  it('operations before start() and after close() reject with invalid_ledger_handle; start twice too', async () => {
    const dataSource = await h().dataSource();
    const ledger = new InvocationLedger(dataSource);
    await ledgerError(ledger.get('x'), 'invalid_ledger_handle');
    await ledgerError(ledger.create('x', META, null), 'invalid_ledger_handle');
    await ledger.start();
    expect(ledger.status()).toEqual({ state: 'started', lock_held: true });
    await ledgerError(ledger.start(), 'invalid_ledger_handle');
    await ledger.create('x', META, null);
    await ledger.close();
    await ledger.close();
    expect(ledger.status()).toEqual({ state: 'closed', lock_held: false });
    await ledgerError(ledger.get('x'), 'invalid_ledger_handle');
    await ledgerError(ledger.claim('x', { leaseMs: 10 }), 'invalid_ledger_handle');
    await ledgerError(ledger.start(), 'invalid_ledger_handle');
  });

  it('close() refuses new operations at once but lets those in flight finish', async () => {
    const ledger = await h().ledger();
    await ledger.create('inv', META, null);
    // hold the row lock so that the claim stays in flight until the transaction ends
    await h().sql('BEGIN');
    await h().sql(`SELECT 1 FROM agent_runtime_invocations WHERE id = 'inv' FOR UPDATE`);
    const claim = ledger.claim('inv', { leaseMs: 1000 });
    await until(async () => (await h().sql(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).length > 0);
    const closing = ledger.close();
    await ledgerError(ledger.get('inv'), 'invalid_ledger_handle');
    expect(ledger.status().state).toBe('closing');
    await h().sql('COMMIT');
    await expect(claim).resolves.toMatchObject({ invocation: { phase: 'running' } });
    await closing;
    expect(ledger.status().state).toBe('closed');
  });

  it('the instance lock is taken at start and released at close', async () => {
    const ledger = await h().ledger({ instanceId: 'worker-1' });
    const key = (await h().sql<{ k: string }>(`SELECT ('x' || left(encode(sha256(convert_to('agent_runtime.ledger.instance:worker-1', 'UTF8')), 'hex'), 16))::bit(64)::bigint AS k`))[0].k;
    const held = async () => (await h().advisoryLocks()).filter((lock) => lock.key === key);
    expect(await held()).toHaveLength(1);
    await ledger.close();
    expect(await held()).toHaveLength(0);
  });
});

describe('§7 codes: database failures keep only the SQLSTATE', () => {
  const h = useLedgerHarness();

  it('a table dropped while running gives ledger_unavailable with details.sqlstate only', async () => {
    const ledger = await h().ledger();
    await h().sql('DROP TABLE agent_runtime_invocations');
    const error = await ledgerError(ledger.get('x'), 'ledger_unavailable');
    expect(error.details).toEqual({ sqlstate: '42P01', socket_error: null });
    expect(error.message).not.toContain('agent_runtime_invocations');
  });

  it('a statement timeout while waiting for the row lock is transaction_aborted (57014) and writes nothing', async () => {
    const dataSource: DataSource = await h().dataSource({ extra: { statement_timeout: 300 } });
    const ledger = await h().ledger({}, {}, dataSource);
    await ledger.create('inv', META, null);
    await h().sql('BEGIN');
    await h().sql(`SELECT 1 FROM agent_runtime_invocations WHERE id = 'inv' FOR UPDATE`);
    try {
      await ledgerError(ledger.claim('inv', { leaseMs: 1000 }), 'transaction_aborted', { sqlstate: '57014', socket_error: null });
    } finally {
      await h().sql('COMMIT');
    }
    expect(await ledger.get('inv')).toMatchObject({ phase: 'ready', revision: 0 });
  });

  it('a connection lost mid-statement is transaction_aborted and nothing was committed', async () => {
    const dataSource = await h().dataSource({ extra: { application_name: 'ledger-victim' } });
    const ledger = await h().ledger({}, {}, dataSource);
    await ledger.create('inv', META, null);
    await h().sql('BEGIN');
    await h().sql(`SELECT 1 FROM agent_runtime_invocations WHERE id = 'inv' FOR UPDATE`);
    const claim = ledger.claim('inv', { leaseMs: 1000 });
    const waiting = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ledger-victim' AND wait_event_type = 'Lock'`;
    await until(async () => (await h().sql(waiting)).length > 0);
    await h().sql(`SELECT pg_terminate_backend(pid) FROM (${waiting}) w`);
    await h().sql('COMMIT');
    await ledgerError(claim, 'transaction_aborted');
    expect(await ledger.get('inv')).toMatchObject({ phase: 'ready', revision: 0 });
  });
});

describe('§7 no content in errors or telemetry; §8 telemetry events', () => {
  const h = useLedgerHarness();

  it('errors of every kind and every telemetry payload carry no checkpoint, outcome, token or id (canary)', async () => {
    const events: unknown[] = [];
    const ledger = await h().ledger({ maxDocumentBytes: 4096 }, { events: { emit: (name, payload) => events.push({ name, payload }) } });
    const other = await h().ledger();
    const id = `${CANARY}-id`;
    const doc = { secret: CANARY, nested: [CANARY] };
    const errors: unknown[] = [];
    const collect = (promise: Promise<unknown>) => promise.catch((error: unknown) => errors.push(error));
    await ledger.create(id, META, doc, { now: T });
    const { ownerToken } = await ledger.claim(id, { leaseMs: 10, now: T });
    await collect(ledger.create(id, META, doc));
    await collect(other.claim(id, { leaseMs: 10, now: T + 1 }));
    await collect(ledger.checkpoint(id, ownerToken, doc, { leaseMs: 10, now: T + 10 }));
    await collect(ledger.finish(id, ownerToken, CANARY as never, doc, doc, { now: T + 1 }));
    await collect(ledger.checkpoint(id, ownerToken, { big: CANARY.repeat(1000) }, { leaseMs: 10, now: T + 1 }));
    await collect(ledger.checkpoint(id, ownerToken, { [CANARY]: () => CANARY }, { leaseMs: 10, now: T + 1 }));
    await collect(ledger.checkpoint(id, ownerToken, { [CANARY]: `${CANARY}\u0000` }, { leaseMs: 10, now: T + 1 }));
    await other.claim(id, { leaseMs: 10, now: T + 10 });
    await collect(ledger.renew(id, ownerToken, { leaseMs: 10, now: T + 11 }));
    await collect(ledger.delete(id, { now: T + 11 }));
    await collect(ledger.claim(CANARY + '\u0000', { leaseMs: 10 }));
    expect(errors).toHaveLength(10);
    for (const error of errors) {
      expect(LedgerError.isLedgerError(error)).toBe(true);
      const text = `${(error as Error).message} ${JSON.stringify(error)} ${JSON.stringify((error as LedgerError).details ?? null)} ${(error as Error).stack}`;
      expect(text).not.toContain('CANARY');
      expect(text).not.toContain(ownerToken);
    }
    await other.create('plain', META, null);
    const plain = await other.claim('plain', { leaseMs: 60_000 });
    const failed = await other.finish('plain', plain.ownerToken, 'failed', { reason: CANARY, message: `Error: ${CANARY}` }, undefined);
    expect(JSON.stringify(failed)).not.toContain('CANARY');
    expect(events.length).toBeGreaterThan(10);
    const text = JSON.stringify(events);
    expect(text).not.toContain('CANARY');
    expect(text).not.toContain(ownerToken);
  });

  it('each operation emits agent_runtime.ledger.operation {operation, outcome, duration_ms, phase}, and a throwing listener breaks nothing', async () => {
    const events: Array<{ name: string; payload: LedgerOperationEvent }> = [];
    const ledger = await h().ledger(
      {},
      {
        events: {
          emit: (name, payload) => {
            events.push({ name, payload: payload as LedgerOperationEvent });
            throw new Error('listener failure');
          },
        },
      },
    );
    await ledger.create('inv', META, null);
    const { ownerToken } = await ledger.claim('inv', { leaseMs: 60_000 });
    await ledgerError(ledger.claim('inv', { leaseMs: 10 }), 'invocation_owned');
    const finished: InvocationRecord = await ledger.finish('inv', ownerToken, 'completed', null, undefined);
    await ledger.get('inv');
    await ledger.delete('inv');
    expect(finished.phase).toBe('completed');
    expect(events.map((e) => e.name)).toEqual(Array(6).fill(LEDGER_OPERATION_EVENT));
    expect(events.map(({ payload: { operation, outcome, phase } }) => [operation, outcome, phase])).toEqual([
      ['create', 'ok', 'ready'],
      ['claim', 'ok', 'running'],
      ['claim', 'invocation_owned', null],
      ['finish', 'ok', 'completed'],
      ['get', 'ok', 'completed'],
      ['delete', 'ok', null],
    ]);
    for (const { payload } of events) {
      expect(Object.keys(payload).sort()).toEqual(['duration_ms', 'operation', 'outcome', 'phase']);
      expect(payload.duration_ms).toBeGreaterThanOrEqual(0);
      expect(Object.isFrozen(payload)).toBe(true);
    }
  });
});

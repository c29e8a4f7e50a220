import type { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { ledgerError, META, rawRow, useLedgerHarness } from '../support/ledger-harness';

const T = 1_000_000;
const RECORD_KEYS = [
  'invocation_id',
  'workflow_id',
  'workflow_version',
  'kind',
  'checkpoint',
  'phase',
  'outcome',
  'owned',
  'owner_instance',
  'lease_until_ms',
  'revision',
  'created_at_ms',
  'updated_at_ms',
];

describe('§4 public record', () => {
  const h = useLedgerHarness();

  it('has exactly the documented snake_case fields, is deeply frozen and JSON-safe, and never carries the owner token', async () => {
    const ledger = await h().ledger();
    const created = await ledger.create('inv', META, { steps: [{ id: 's1', nested: { deep: true } }] }, { now: T });
    const { ownerToken, invocation } = await ledger.claim('inv', { leaseMs: 500, now: T + 1 });
    const fetched = await ledger.get('inv');
    for (const record of [created, invocation, fetched]) {
      expect(Object.keys(record as object).sort()).toEqual([...RECORD_KEYS].sort());
      expect(Object.isFrozen(record)).toBe(true);
      expect(JSON.parse(JSON.stringify(record))).toEqual(record);
      expect(JSON.stringify(record)).not.toContain(ownerToken);
    }
    const checkpoint = fetched?.checkpoint as { steps: Array<{ nested: object }> };
    expect(Object.isFrozen(checkpoint.steps)).toBe(true);
    expect(Object.isFrozen(checkpoint.steps[0].nested)).toBe(true);
    expect(fetched).toEqual({
      invocation_id: 'inv',
      workflow_id: 'helper',
      workflow_version: '1',
      kind: 'agent_run',
      checkpoint: { steps: [{ id: 's1', nested: { deep: true } }] },
      phase: 'running',
      outcome: null,
      owned: true,
      owner_instance: ledger.instanceId,
      lease_until_ms: T + 501,
      revision: 1,
      created_at_ms: T,
      updated_at_ms: T + 1,
    });
  });

  it('owned is true exactly while running, and owner_instance names the claiming instance only then', async () => {
    const ledger = await h().ledger();
    expect((await ledger.create('inv', META, null)).owned).toBe(false);
    const { ownerToken, invocation } = await ledger.claim('inv', { leaseMs: 1000 });
    expect(invocation).toMatchObject({ owned: true, owner_instance: ledger.instanceId });
    const paused = await ledger.finish('inv', ownerToken, 'paused', null, undefined);
    expect(paused).toMatchObject({ owned: false, owner_instance: null, lease_until_ms: 0 });
  });

  it('bigint columns come back as numbers; JSON documents round-trip as equal values, not identical text', async () => {
    const ledger = await h().ledger();
    const big = 2 ** 52 + 12_345;
    const checkpoint = { z: 1, a: [1.5, -0, 'é\u2028', { '': null }], m: { b: true, a: false } };
    const record = await ledger.create('inv', META, checkpoint, { now: big });
    expect(record.created_at_ms).toBe(big);
    expect(typeof record.revision).toBe('number');
    expect(record.checkpoint).toEqual({ a: [1.5, 0, 'é\u2028', { '': null }], m: { a: false, b: true }, z: 1 });
    expect((await ledger.get('inv'))?.checkpoint).toEqual(record.checkpoint);
  });
});

describe('§5 operations', () => {
  const h = useLedgerHarness();

  async function claimed(ledger: InvocationLedger, id = 'inv', leaseMs = 100) {
    await ledger.create(id, META, { step: 0 }, { now: T - 1 });
    return ledger.claim(id, { leaseMs, now: T });
  }

  describe('create', () => {
    it('inserts phase ready, revision 0, lease 0, created = updated = now, the checkpoint as given (JSON null allowed)', async () => {
      const ledger = await h().ledger();
      expect(await ledger.create('inv', META, null, { now: T })).toEqual({
        invocation_id: 'inv',
        workflow_id: 'helper',
        workflow_version: '1',
        kind: 'agent_run',
        checkpoint: null,
        phase: 'ready',
        outcome: null,
        owned: false,
        owner_instance: null,
        lease_until_ms: 0,
        revision: 0,
        created_at_ms: T,
        updated_at_ms: T,
      });
      const [row] = await h().sql(`SELECT format, checkpoint IS NULL AS sql_null, jsonb_typeof(checkpoint) AS type FROM agent_runtime_invocations`);
      expect(row).toEqual({ format: 1, sql_null: false, type: 'null' });
    });

    it('an existing id is already_exists and the stored row stays as it was', async () => {
      const ledger = await h().ledger();
      await ledger.create('inv', META, { first: true }, { now: T });
      const before = await rawRow(h(), 'inv');
      await ledgerError(ledger.create('inv', { ...META, kind: 'other' }, { second: true }, { now: T + 5 }), 'already_exists');
      expect(await rawRow(h(), 'inv')).toEqual(before);
    });
  });

  describe('claim', () => {
    it('sets running, a fresh token, this instance as owner, lease = now + leaseMs, revision + 1, and clears the outcome', async () => {
      const ledger = await h().ledger();
      await ledger.create('inv', META, { step: 0 }, { now: T - 1 });
      const { ownerToken, invocation } = await ledger.claim('inv', { leaseMs: 250, now: T });
      expect(ownerToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(invocation).toMatchObject({ phase: 'running', owner_instance: ledger.instanceId, lease_until_ms: T + 250, revision: 1, updated_at_ms: T });
      expect(await rawRow(h(), 'inv')).toMatchObject({ owner_token: ownerToken });
    });

    it('uses a given ownerToken (stored lower-case)', async () => {
      const ledger = await h().ledger();
      await ledger.create('inv', META, null);
      const token = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11';
      const result = await ledger.claim('inv', { ownerToken: token, leaseMs: 1000 });
      expect(result.ownerToken).toBe(token.toLowerCase());
      await ledger.renew('inv', token, { leaseMs: 1000 });
    });

    it('a missing row is not_found', async () => {
      const ledger = await h().ledger();
      await ledgerError(ledger.claim('nope', { leaseMs: 10 }), 'not_found');
    });
  });

  describe('renew, checkpoint, finish', () => {
    it('renew extends the lease to now + leaseMs and adds one to the revision', async () => {
      const ledger = await h().ledger();
      const { ownerToken } = await claimed(ledger);
      const renewed = await ledger.renew('inv', ownerToken, { leaseMs: 1000, now: T + 50 });
      expect(renewed).toMatchObject({ lease_until_ms: T + 1050, revision: 2, updated_at_ms: T + 50, phase: 'running', checkpoint: { step: 0 } });
    });

    it('checkpoint stores the checkpoint, keeps running and extends the lease', async () => {
      const ledger = await h().ledger();
      const { ownerToken } = await claimed(ledger);
      const saved = await ledger.checkpoint('inv', ownerToken, { completed_steps: [{ step_id: 's1', response: 'ok' }] }, { leaseMs: 300, now: T + 10 });
      expect(saved).toMatchObject({ phase: 'running', lease_until_ms: T + 310, revision: 2, checkpoint: { completed_steps: [{ step_id: 's1', response: 'ok' }] } });
    });

    it('finish stores phase, outcome and checkpoint, and clears token, owner and lease; undefined keeps the checkpoint, null stores JSON null', async () => {
      const ledger = await h().ledger();
      const first = await claimed(ledger, 'a');
      const kept = await ledger.finish('a', first.ownerToken, 'completed', { answer: [42] }, undefined, { now: T + 1 });
      expect(kept).toMatchObject({ phase: 'completed', outcome: { answer: [42] }, checkpoint: { step: 0 }, owned: false, owner_instance: null, lease_until_ms: 0, revision: 2, updated_at_ms: T + 1 });
      expect(await rawRow(h(), 'a')).toMatchObject({ owner_token: null, owner_instance: null });
      const second = await claimed(ledger, 'b');
      expect(await ledger.finish('b', second.ownerToken, 'paused', { pending: ['c1'] }, null, { now: T + 1 })).toMatchObject({ checkpoint: null, outcome: { pending: ['c1'] } });
      const third = await claimed(ledger, 'c');
      expect(await ledger.finish('c', third.ownerToken, 'timed_out', undefined, { step: 3 }, { now: T + 1 })).toMatchObject({ outcome: null, checkpoint: { step: 3 } });
    });

    it('failed and cancelled outcomes keep only {reason}: reason, code or error_code when it is a code, else unspecified', async () => {
      const ledger = await h().ledger();
      const cases: Array<[unknown, string]> = [
        [{ reason: 'tool_timeout', message: 'Error: secret stack' }, 'tool_timeout'],
        [{ code: 'conn:reset-1.x', detail: 'x' }, 'conn:reset-1.x'],
        [{ code: 'E_UPPER_CASE' }, 'unspecified'],
        [{ reason: 'x'.repeat(129) }, 'unspecified'],
        [{ error_code: 'rate_limited' }, 'rate_limited'],
        [{ reason: 'Has Spaces', code: 'fallback' }, 'fallback'],
        [new Error('boom'), 'unspecified'],
        ['just text', 'unspecified'],
        [undefined, 'unspecified'],
      ];
      let i = 0;
      for (const [outcome, reason] of cases) {
        const id = `inv-${i++}`;
        const { ownerToken } = await claimed(ledger, id);
        const record = await ledger.finish(id, ownerToken, i % 2 ? 'failed' : 'cancelled', outcome, undefined, { now: T + 1 });
        expect(record.outcome).toEqual({ reason });
      }
    });

    it('a sanitizeTerminalOutcome option replaces the projection; a throwing one is invalid_finish_arguments', async () => {
      const seen: string[] = [];
      const ledger = await h().ledger({
        sanitizeTerminalOutcome: (phase, outcome) => {
          seen.push(phase);
          if ((outcome as { explode?: boolean }).explode) throw new Error('secret');
          return { kept: (outcome as { keep: unknown }).keep };
        },
      });
      const { ownerToken } = await claimed(ledger);
      await ledgerError(ledger.finish('inv', ownerToken, 'failed', { explode: true }, undefined, { now: T + 1 }), 'invalid_finish_arguments', { field: 'outcome' });
      expect(await ledger.finish('inv', ownerToken, 'cancelled', { keep: 7, drop: 'x' }, undefined, { now: T + 1 })).toMatchObject({ outcome: { kept: 7 } });
      expect(seen).toEqual(['failed', 'cancelled']);
    });
  });

  describe('write fence', () => {
    it('at exactly lease_until_ms the owner gets lease_expired from renew, checkpoint and finish, and nothing changes', async () => {
      const ledger = await h().ledger();
      const { ownerToken } = await claimed(ledger, 'inv', 10);
      const before = await rawRow(h(), 'inv');
      const at = { now: T + 10 };
      await ledgerError(ledger.renew('inv', ownerToken, { leaseMs: 10, ...at }), 'lease_expired');
      await ledgerError(ledger.checkpoint('inv', ownerToken, { step: 1 }, { leaseMs: 10, ...at }), 'lease_expired');
      await ledgerError(ledger.finish('inv', ownerToken, 'completed', null, { step: 1 }, at), 'lease_expired');
      await ledgerError(ledger.renew('inv', ownerToken, { leaseMs: 10, now: T + 11 }), 'lease_expired');
      expect(await rawRow(h(), 'inv')).toEqual(before);
      expect(before).toMatchObject({ revision: '1', lease_until_ms: String(T + 10), checkpoint: { step: 0 }, updated_at_ms: String(T) });
      // one millisecond earlier the same write is accepted
      expect(await ledger.renew('inv', ownerToken, { leaseMs: 10, now: T + 9 })).toMatchObject({ lease_until_ms: T + 19, revision: 2 });
    });

    it('after a takeover the old token gets stale_owner and changes nothing; the new owner writes', async () => {
      const a = await h().ledger();
      const b = await h().ledger();
      const old = await claimed(a, 'inv', 10);
      const current = await b.claim('inv', { leaseMs: 10, now: T + 10 });
      const before = await rawRow(h(), 'inv');
      await ledgerError(a.renew('inv', old.ownerToken, { leaseMs: 10, now: T + 11 }), 'stale_owner');
      await ledgerError(a.checkpoint('inv', old.ownerToken, { step: 'stale' }, { leaseMs: 10, now: T + 11 }), 'stale_owner');
      await ledgerError(a.finish('inv', old.ownerToken, 'failed', null, undefined, { now: T + 11 }), 'stale_owner');
      expect(await rawRow(h(), 'inv')).toEqual(before);
      expect(await b.checkpoint('inv', current.ownerToken, { step: 'new' }, { leaseMs: 10, now: T + 11 })).toMatchObject({ revision: 3, checkpoint: { step: 'new' } });
    });

    it('a fenced write on a row that is not running is stale_owner; on a missing row not_found', async () => {
      const ledger = await h().ledger();
      await ledger.create('ready', META, null);
      const token = '00000000-0000-4000-8000-000000000000';
      await ledgerError(ledger.renew('ready', token, { leaseMs: 10 }), 'stale_owner');
      await ledgerError(ledger.checkpoint('missing', token, {}, { leaseMs: 10 }), 'not_found');
      await ledgerError(ledger.finish('missing', token, 'completed', null, undefined), 'not_found');
      await ledgerError(ledger.renew('missing', token, { leaseMs: 10 }), 'not_found');
    });
  });

  describe('delete and get', () => {
    it('delete of an actively owned row is invocation_owned; after the lease it removes the row; a missing row gives false', async () => {
      const owner = await h().ledger();
      const other = await h().ledger();
      await claimed(owner, 'inv', 10);
      await ledgerError(other.delete('inv', { now: T + 9 }), 'invocation_owned');
      await ledgerError(owner.delete('inv', { now: T + 9 }), 'invocation_owned');
      expect(await other.delete('inv', { now: T + 10 })).toBe(true);
      expect(await other.get('inv')).toBeNull();
      expect(await other.delete('inv')).toBe(false);
    });

    it('delete removes ready, paused and completed rows', async () => {
      const ledger = await h().ledger();
      await ledger.create('ready', META, null);
      const { ownerToken } = await claimed(ledger, 'done');
      await ledger.finish('done', ownerToken, 'completed', null, undefined, { now: T + 1 });
      expect(await ledger.delete('ready')).toBe(true);
      expect(await ledger.delete('done')).toBe(true);
      expect(await h().sql('SELECT id FROM agent_runtime_invocations')).toEqual([]);
    });

    it('get returns null for a missing id', async () => {
      const ledger = await h().ledger();
      expect(await ledger.get('missing')).toBeNull();
    });
  });

  describe('database clock and explicit now (§6)', () => {
    it('without now, times come from the database clock, not the process clock', async () => {
      const ledger = await h().ledger();
      const spy = jest.spyOn(Date, 'now').mockReturnValue(0);
      try {
        const [{ db_ms }] = await h().sql<{ db_ms: string }>('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS db_ms');
        const created = await ledger.create('inv', META, null);
        const { invocation } = await ledger.claim('inv', { leaseMs: 60_000 });
        expect(created.created_at_ms).toBeGreaterThanOrEqual(Number(db_ms));
        expect(created.created_at_ms).toBeLessThan(Number(db_ms) + 60_000);
        expect(invocation.lease_until_ms - invocation.updated_at_ms).toBe(60_000);
        expect(invocation.updated_at_ms).toBeGreaterThanOrEqual(created.created_at_ms);
      } finally {
        spy.mockRestore();
      }
    });

    it('an explicit now replaces the clock for every comparison and stored time of that call', async () => {
      const ledger = await h().ledger();
      // a lease set by the database clock is far in the future of now = 5
      await ledger.create('inv', META, null);
      const { ownerToken } = await ledger.claim('inv', { leaseMs: 10 });
      expect(await ledger.renew('inv', ownerToken, { leaseMs: 10, now: 5 })).toMatchObject({ lease_until_ms: 15, updated_at_ms: 5 });
      await ledgerError(ledger.renew('inv', ownerToken, { leaseMs: 10, now: 15 }), 'lease_expired');
    });
  });
});

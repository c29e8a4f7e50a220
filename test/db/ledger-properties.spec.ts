import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { invocationLedgerDdl } from '../../migrations/1764500000000-invocation-ledger';
import { validateSchema } from '../../src/database/schema/schema-validator';
import type { InvocationLedger } from '../../src/ledger/invocation-ledger';
import type { TerminalPhase } from '../../src/ledger/invocation-record';
import { LEDGER_TABLE_SPEC } from '../../src/ledger/storage/ledger.schema';
import { META, openLedgerHarness, type LedgerHarness } from '../support/ledger-harness';
import { LedgerModel, type LedgerCommand, type Prediction } from '../support/ledger-model';

const TIME_LIMIT_MS = 25_000;
const FOREIGN_TOKEN = '00000000-0000-4000-8000-000000000000';

const json = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 8 }), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), fc.boolean(), { maxKeys: 3 }));
// small steps and leases make the boundaries (now = lease_until_ms) frequent
const dt = fc.integer({ min: 0, max: 4 });
const lease = fc.integer({ min: 1, max: 6 });
/** 0 is the latest claim's token, 1 the one before, …; beyond the issued ones a token never issued. */
const tokenIndex = fc.nat({ max: 3 });
const command: fc.Arbitrary<LedgerCommand> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), dt, checkpoint: json }),
  { arbitrary: fc.record({ op: fc.constant('claim' as const), instance: fc.nat({ max: 1 }), dt, lease }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('renew' as const), token: tokenIndex, dt, lease }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('checkpoint' as const), token: tokenIndex, dt, lease, checkpoint: json }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('finish' as const),
      token: tokenIndex,
      dt,
      phase: fc.constantFrom('completed', 'failed', 'timed_out', 'cancelled', 'paused', 'running', 'ready'),
      checkpoint: fc.option(json, { nil: undefined }),
    }),
    weight: 2,
  },
  fc.record({ op: fc.constant('delete' as const), instance: fc.nat({ max: 1 }), dt }),
);

async function outcomeOf(promise: Promise<unknown>): Promise<Prediction> {
  try {
    const value = await promise;
    return value === false ? 'false' : 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('§10 invariants (property-based)', () => {
  let harness: LedgerHarness;
  let ledgers: InvocationLedger[];

  beforeAll(async () => {
    harness = await openLedgerHarness();
    ledgers = [await harness.ledger(), await harness.ledger()];
  });

  afterAll(async () => {
    await harness.close();
  });

  it('revision rises by exactly 1 per successful mutation and never on a refused one; owned ⇔ running; a fenced write succeeds only with the latest token while now < lease_until_ms; completed is absorbing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25, size: 'medium' }), async (commands) => {
        const id = randomUUID();
        const model = new LedgerModel();
        const tokens: string[] = [];
        const tokenOf = (index: number) => (index < tokens.length ? tokens[tokens.length - 1 - index] : FOREIGN_TOKEN);
        let now = 1000;
        for (const cmd of [{ op: 'create', dt: 0, checkpoint: null } as LedgerCommand, ...commands]) {
          now += cmd.dt;
          const before = model.row ? { ...model.row } : null;
          const claimToken = randomUUID();
          const predicted = model.apply(cmd, now, tokenOf, claimToken);
          const actual = await outcomeOf(run(cmd, id, now, tokenOf, claimToken));
          if (cmd.op === 'claim' && actual === 'ok') tokens.push(claimToken);
          expect({ cmd, actual }).toEqual({ cmd, actual: predicted });
          const record = await ledgers[0].get(id);
          const row = model.row;
          expect(record === null).toBe(row === null);
          if (!record || !row) continue;
          expect(record.owned).toBe(record.phase === 'running');
          expect(record).toMatchObject({ phase: row.phase, revision: row.revision, lease_until_ms: row.lease, owner_instance: row.owner === null ? null : ledgers[row.owner].instanceId });
          expect(record.checkpoint).toEqual(row.checkpoint);
          if (before && actual !== 'ok') expect(record.revision).toBe(before.revision);
          if (before?.phase === 'completed') expect(record.phase).toBe('completed');
        }
      }),
      { numRuns: 40, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );

    function run(cmd: LedgerCommand, id: string, now: number, tokenOf: (i: number) => string, claimToken: string): Promise<unknown> {
      switch (cmd.op) {
        case 'create':
          return ledgers[0].create(id, META, cmd.checkpoint, { now });
        case 'claim':
          return ledgers[cmd.instance].claim(id, { ownerToken: claimToken, leaseMs: cmd.lease, now });
        case 'renew':
          return ledgers[0].renew(id, tokenOf(cmd.token), { leaseMs: cmd.lease, now });
        case 'checkpoint':
          return ledgers[1].checkpoint(id, tokenOf(cmd.token), cmd.checkpoint, { leaseMs: cmd.lease, now });
        case 'finish':
          return ledgers[0].finish(id, tokenOf(cmd.token), cmd.phase as TerminalPhase, cmd.phase === 'failed' || cmd.phase === 'cancelled' ? undefined : { by: 'model' }, cmd.checkpoint, { now });
        case 'delete':
          return ledgers[cmd.instance].delete(id, { now });
      }
    }
  }, 60_000);

  it('for any interleaving of concurrent claims on one row, at most one token is valid at any now: the latest claim’s, and only before its lease ends', async () => {
    const claimArb = fc.record({ instance: fc.nat({ max: 1 }), now: fc.integer({ min: 0, max: 20 }), lease: fc.integer({ min: 1, max: 10 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(claimArb, { minLength: 1, maxLength: 10 }), fc.integer({ min: 0, max: 40 }), async (claims, probeNow) => {
        const id = randomUUID();
        await ledgers[0].create(id, META, null, { now: 0 });
        const results = await Promise.allSettled(claims.map((c) => ledgers[c.instance].claim(id, { leaseMs: c.lease, now: c.now })));
        const granted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
        for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'invocation_owned' });
        expect(granted.length).toBeGreaterThanOrEqual(1);
        const latest = granted.reduce((a, b) => (b.invocation.revision > a.invocation.revision ? b : a));
        expect(new Set(granted.map((g) => g.invocation.revision)).size).toBe(granted.length);
        const valid: string[] = [];
        for (const { ownerToken } of granted) {
          const outcome = await outcomeOf(ledgers[1].renew(id, ownerToken, { leaseMs: 1, now: probeNow }));
          if (outcome === 'ok') valid.push(ownerToken);
          // a successful probe moved the lease; put it back so the next token meets the same row
          if (outcome === 'ok') await ledgers[1].renew(id, ownerToken, { leaseMs: latest.invocation.lease_until_ms - probeNow, now: probeNow });
        }
        expect(valid).toEqual(probeNow < latest.invocation.lease_until_ms ? [latest.ownerToken] : []);
      }),
      { numRuns: 40, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  }, 60_000);

  it('the validator reports every injected difference (type, nullability, index columns, predicate, check, persistence, missing migration) and nothing for a freshly migrated table', async () => {
    const dataSource: DataSource = await harness.dataSource();
    const table = LEDGER_TABLE_SPEC.name;
    const injections: Record<string, { sql: (s: string) => string[]; table: string; property: string }> = {
      type: { sql: (s) => [`ALTER TABLE ${s}.${table} ALTER COLUMN workflow_version TYPE varchar(256)`], table, property: 'column:workflow_version' },
      nullability: { sql: (s) => [`ALTER TABLE ${s}.${table} ALTER COLUMN kind DROP NOT NULL`], table, property: 'column:kind' },
      default: { sql: (s) => [`ALTER TABLE ${s}.${table} ALTER COLUMN phase SET DEFAULT 'paused'`], table, property: 'column:phase' },
      indexColumns: {
        sql: (s) => [`DROP INDEX ${s}.${table}_owner_instance_idx`, `CREATE INDEX ${table}_owner_instance_idx ON ${s}.${table} (id, owner_instance) WHERE owner_instance IS NOT NULL`],
        table,
        property: `index:${table}_owner_instance_idx`,
      },
      predicate: {
        sql: (s) => [`DROP INDEX ${s}.${table}_running_lease_idx`, `CREATE INDEX ${table}_running_lease_idx ON ${s}.${table} (lease_until_ms) WHERE phase <> 'ready'`],
        table,
        property: `index:${table}_running_lease_idx`,
      },
      check: {
        sql: (s) => [`ALTER TABLE ${s}.${table} DROP CONSTRAINT ${table}_format_check`, `ALTER TABLE ${s}.${table} ADD CONSTRAINT ${table}_format_check CHECK (format >= 1)`],
        table,
        property: `check:${table}_format_check`,
      },
      persistence: { sql: (s) => [`ALTER TABLE ${s}.${table} SET UNLOGGED`], table, property: 'persistence' },
      migration: {
        sql: () => [`DELETE FROM agent_runtime_migrations WHERE name = 'InvocationLedger1764500000000'`],
        table: 'agent_runtime_migrations',
        property: 'migration:InvocationLedger1764500000000',
      },
    };
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.subarray(Object.keys(injections)), async (chosen) => {
        const schema = `prop_${run++}`;
        await harness.sql(`CREATE SCHEMA ${schema}`);
        await harness.sql(`SET search_path = ${schema}`);
        for (const statement of invocationLedgerDdl(table)) await harness.sql(statement);
        await harness.sql('SET search_path = DEFAULT');
        const [migrationRow] = await harness.sql('SELECT * FROM agent_runtime_migrations WHERE name = $1', ['InvocationLedger1764500000000']);
        try {
          for (const name of chosen) for (const statement of injections[name].sql(schema)) await harness.sql(statement);
          const report = await validateSchema(dataSource, [LEDGER_TABLE_SPEC], { schema });
          const reported = report.mismatches.map((m) => `${m.table} ${m.property}`).sort();
          expect(reported).toEqual(chosen.map((name) => `${injections[name].table} ${injections[name].property}`).sort());
          expect(report.ok).toBe(chosen.length === 0);
        } finally {
          await harness.sql(`INSERT INTO agent_runtime_migrations (timestamp, name) SELECT $1::bigint, $2::varchar WHERE NOT EXISTS (SELECT 1 FROM agent_runtime_migrations WHERE name = $2::varchar)`, [
            migrationRow.timestamp,
            migrationRow.name,
          ]);
          await harness.sql(`DROP SCHEMA ${schema} CASCADE`);
        }
      }),
      { numRuns: 15, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  }, 60_000);
});

import type { MigrationInterface } from 'typeorm';
import { AGENT_RUNTIME_MIGRATIONS } from '../../migrations';
import { validateSchema } from '../../src/database/schema/schema-validator';
import { createLedgerMigration } from '../../src/ledger/storage/ledger-migration';
import { LEDGER_TABLE_SPEC, ledgerTableSpec } from '../../src/ledger/storage/ledger.schema';
import { ledgerError, META, useLedgerHarness, type LedgerHarness } from '../support/ledger-harness';
import { startTcpProxy } from '../support/tcp-proxy';

const TABLE = 'agent_runtime_invocations';

async function databaseName(harness: LedgerHarness): Promise<string> {
  return (await harness.sql<{ db: string }>('SELECT current_database() AS db'))[0].db;
}

async function mismatchesOf(harness: LedgerHarness, dataSourceOverrides = {}) {
  const dataSource = await harness.dataSource(dataSourceOverrides);
  const error = await ledgerError(harness.ledger({}, {}, dataSource), 'schema_mismatch');
  expect(error.message).toBe(`schema_mismatch {"mismatches":${(error.details?.mismatches as unknown[]).length}}`);
  return error.details?.mismatches;
}

describe('§2 ledger table', () => {
  const h = useLedgerHarness();

  it('the migration creates exactly what the TableSpec declares: a migrated database validates with no mismatch', async () => {
    const report = await validateSchema(await h().dataSource(), [LEDGER_TABLE_SPEC]);
    expect(report).toEqual({ ok: true, mismatches: [] });
  });

  it('columns default to format 1, phase ready, lease 0 and revision 0', async () => {
    await h().sql(`INSERT INTO ${TABLE} (id, workflow_id, workflow_version, kind, checkpoint, created_at_ms, updated_at_ms) VALUES ('x', 'w', '1', 'k', 'null', 1, 1)`);
    expect((await h().sql(`SELECT format, phase, lease_until_ms, revision, outcome, owner_token FROM ${TABLE}`))[0]).toEqual({
      format: 1,
      phase: 'ready',
      lease_until_ms: '0',
      revision: '0',
      outcome: null,
      owner_token: null,
    });
  });

  it('the database refuses rows breaking the format, phase, owner and counters checks', async () => {
    await h().sql(`INSERT INTO ${TABLE} (id, workflow_id, workflow_version, kind, checkpoint, created_at_ms, updated_at_ms) VALUES ('x', 'w', '1', 'k', 'null', 1, 1)`);
    const refusals: Array<[string, string]> = [
      ['format_check', `format = 2`],
      ['phase_check', `phase = 'done'`],
      ['owner_check', `phase = 'running'`],
      ['owner_check', `owner_instance = 'i'`],
      ['owner_check', `lease_until_ms = 5`],
      ['owner_check', `phase = 'running', owner_token = gen_random_uuid()`],
      ['counters_check', `revision = -1`],
    ];
    for (const [constraint, assignment] of refusals) {
      await expect(h().sql(`UPDATE ${TABLE} SET ${assignment}`)).rejects.toMatchObject({ code: '23514', constraint: `${TABLE}_${constraint}` });
    }
    await h().sql(`UPDATE ${TABLE} SET phase = 'running', owner_token = gen_random_uuid(), owner_instance = 'i', lease_until_ms = 5`);
  });

  it('a custom tableName runs on a table made by createLedgerMigration, with derived constraint and index names', async () => {
    const migration = createLedgerMigration('billing_invocations');
    const dataSource = await h().dataSource({ migrations: [...AGENT_RUNTIME_MIGRATIONS, migration] });
    await dataSource.runMigrations();
    const ledger = await h().ledger({ tableName: 'billing_invocations' }, {}, dataSource);
    await ledger.create('inv', META, null);
    expect(await h().sql(`SELECT id FROM billing_invocations`)).toEqual([{ id: 'inv' }]);
    expect(await h().sql(`SELECT id FROM ${TABLE}`)).toEqual([]);
    const indexes = await h().sql<{ name: string }>(`SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'billing_invocations'::regclass ORDER BY 1`);
    expect(indexes.map((row) => row.name)).toEqual(['billing_invocations_owner_instance_idx', 'billing_invocations_pkey', 'billing_invocations_running_lease_idx']);
    expect((await validateSchema(dataSource, [ledgerTableSpec('billing_invocations')])).ok).toBe(true);
  });

  it('the schema option finds the table in another Postgres schema and writes there', async () => {
    const migration = new (AGENT_RUNTIME_MIGRATIONS[1] as new () => MigrationInterface)();
    await h().sql('CREATE SCHEMA tenant_a');
    const dataSource = await h().dataSource();
    const runner = dataSource.createQueryRunner();
    await runner.query('SET search_path = tenant_a');
    await migration.up(runner);
    await runner.query('SET search_path = DEFAULT');
    await runner.release();
    const ledger = await h().ledger({ schema: 'tenant_a' }, {}, dataSource);
    await ledger.create('inv', META, null);
    expect(await h().sql(`SELECT id FROM tenant_a.${TABLE}`)).toEqual([{ id: 'inv' }]);
    expect(await h().sql(`SELECT id FROM public.${TABLE}`)).toEqual([]);
    await ledgerError(h().ledger({ schema: 'tenant_b' }, {}, dataSource), 'schema_mismatch', {
      mismatches: [{ table: TABLE, property: 'table', expected: 'present', actual: 'missing' }],
    });
  });
});

describe('§1 start-up validation of the ledger table', () => {
  const h = useLedgerHarness();

  it('a missing table', async () => {
    await h().sql(`DROP TABLE ${TABLE}`);
    expect(await mismatchesOf(h())).toEqual([{ table: TABLE, property: 'table', expected: 'present', actual: 'missing' }]);
  });

  it('a TEMP table of the same name shadowing the real one in the pooled session', async () => {
    const dataSource = await h().dataSource({ extra: { max: 1 } });
    await dataSource.query(`CREATE TEMP TABLE ${TABLE} (LIKE public.${TABLE} INCLUDING ALL)`);
    const error = await ledgerError(h().ledger({}, {}, dataSource), 'schema_mismatch');
    expect(error.details?.mismatches).toEqual([{ table: TABLE, property: 'persistence', expected: 'permanent', actual: 'temporary' }]);
  });

  it('refuses with one report naming every mismatch: synchronous_commit off, unapplied migration, UNLOGGED, nullable, missing column, wrong type, missing index', async () => {
    const database = await databaseName(h());
    await h().sql(`ALTER DATABASE ${database} SET synchronous_commit = off`);
    await h().sql(`DELETE FROM agent_runtime_migrations WHERE name = 'InvocationLedger1764500000000'`);
    await h().sql(`ALTER TABLE ${TABLE} SET UNLOGGED`);
    await h().sql(`ALTER TABLE ${TABLE} ALTER COLUMN workflow_id DROP NOT NULL`);
    await h().sql(`ALTER TABLE ${TABLE} DROP COLUMN kind`);
    await h().sql(`ALTER TABLE ${TABLE} ALTER COLUMN revision TYPE integer`);
    await h().sql(`DROP INDEX ${TABLE}_running_lease_idx`);
    const startedAt = Date.now();
    const mismatches = await mismatchesOf(h());
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(mismatches).toEqual([
      { table: null, property: 'synchronous_commit', expected: 'not off', actual: 'off' },
      { table: null, property: 'synchronous_commit', expected: 'not off', actual: 'off on dedicated connection 1' },
      { table: 'agent_runtime_migrations', property: 'migration:InvocationLedger1764500000000', expected: 'applied', actual: 'pending' },
      { table: TABLE, property: 'persistence', expected: 'permanent', actual: 'unlogged' },
      { table: TABLE, property: 'column:workflow_id', expected: 'text not null', actual: 'text null' },
      { table: TABLE, property: 'column:kind', expected: 'text not null', actual: 'missing' },
      { table: TABLE, property: 'column:revision', expected: 'bigint not null default 0', actual: 'integer not null default 0' },
      { table: TABLE, property: `index:${TABLE}_running_lease_idx`, expected: "btree (lease_until_ms) where phase = 'running'::text", actual: 'missing' },
    ]);
  });

  it('a refused start leaves no instance lock behind and can be retried once the schema is fixed', async () => {
    await h().sql(`ALTER TABLE ${TABLE} ALTER COLUMN kind DROP NOT NULL`);
    const dataSource = await h().dataSource();
    await ledgerError(h().ledger({ instanceId: 'retry-me' }, {}, dataSource), 'schema_mismatch');
    expect(await h().advisoryLocks()).toEqual([]);
    await h().sql(`ALTER TABLE ${TABLE} ALTER COLUMN kind SET NOT NULL`);
    const ledger = await h().ledger({ instanceId: 'retry-me' }, {}, dataSource);
    expect(ledger.lockHeld).toBe(true);
  });

  it('an unreachable database fails start with ledger_unavailable after the connect retries, within seconds', async () => {
    const proxy = await startTcpProxy(h().database.url);
    const dataSource = await h().dataSource({}, proxy.url);
    await proxy.sever();
    const startedAt = Date.now();
    const error = await ledgerError(h().ledger({ connectRetries: 2 }, {}, dataSource), 'ledger_unavailable');
    expect(error.details).toMatchObject({ attempts: 3, socket_error: 'ECONNREFUSED' });
    expect(Date.now() - startedAt).toBeLessThan(8000);
  });

  it('an initialised Postgres DataSource is required (invalid_ledger_options naming dataSource)', async () => {
    const dataSource = await h().dataSource();
    await dataSource.destroy();
    await ledgerError(h().ledger({}, {}, dataSource), 'invalid_ledger_options', { field: 'dataSource' });
  });
});

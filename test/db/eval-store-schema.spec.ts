import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { MigrationInterface } from 'typeorm';
import { AGENT_RUNTIME_MIGRATIONS } from '../../migrations';
import { EvaluationStore1764800000000, evalStoreDdl } from '../../migrations/1764800000000-evaluation-store';
import { validateSchema } from '../../src/database/schema/schema-validator';
import { createEvalStoreMigrations } from '../../src/evaluation/store/eval-store-migration';
import { evalStoreTableSpecs, evalTableNames } from '../../src/evaluation/store/eval-store.schema';
import { canonicalJson } from '../../src/json';
import { evalError, evalResult, preparedRequest, tableCounts, useEvalHarness, type EvalHarness } from '../support/eval-fixtures';
import { createFreshDatabase, withDatabase } from '../support/fresh-database';

/** `ON DELETE RESTRICT` refusals: `restrict_violation` (23001) on Postgres 18, `foreign_key_violation` (23503) before. */
const RESTRICT_VIOLATION = /^23(?:001|503)$/;

const A = Object.freeze({ app: 'app-a' });
/** The longest legal prefix: 41 characters. */
const LONGEST_PREFIX = `p${'x'.repeat(39)}_`;

async function withCustomPrefix(h: EvalHarness, prefix: string) {
  const dataSource = await h.dataSource({ migrations: [...AGENT_RUNTIME_MIGRATIONS, ...createEvalStoreMigrations(prefix)] });
  await dataSource.runMigrations();
  return dataSource;
}

/** Every constraint and index name of the tables of `prefix`, as the catalog holds them (NOT NULL constraints aside). */
async function catalogNames(h: EvalHarness, prefix: string): Promise<string[]> {
  const tables = Object.values(evalTableNames(prefix));
  const rows = await h.sql<{ name: string }>(
    `SELECT conname::text AS name FROM pg_constraint WHERE conrelid = ANY ($1::regclass[]) AND contype IN ('p', 'c', 'f', 'u')
     UNION SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = ANY ($1::regclass[]) ORDER BY 1`,
    [tables],
  );
  return rows.map((row) => row.name);
}

function declaredNames(prefix: string): string[] {
  const names = new Set<string>();
  for (const spec of evalStoreTableSpecs(prefix)) {
    names.add(`${spec.name}_pkey`);
    for (const item of [...(spec.indexes ?? []), ...(spec.checks ?? []), ...(spec.foreignKeys ?? []), ...(spec.uniques ?? [])]) names.add(item.name);
  }
  return [...names].sort();
}

describe('§2.2 the five tables', () => {
  const h = useEvalHarness('each');

  it('the package migration creates exactly what the TableSpecs declare, the global usage row and one identity row', async () => {
    const dataSource = await h().dataSource();
    expect(await validateSchema(dataSource, evalStoreTableSpecs())).toEqual({ ok: true, mismatches: [] });
    const store = await h().store({}, {}, dataSource);
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    await store.assertSchema(connection);
    expect(await h().sql('SELECT scope_app, sets, jobs, baselines, bytes FROM agent_runtime_eval_usage')).toEqual([{ scope_app: '', sets: 0, jobs: 0, baselines: 0, bytes: '0' }]);
    const identity = await h().sql<{ singleton: boolean; identity_uuid: string }>('SELECT singleton, identity_uuid FROM agent_runtime_eval_identity');
    expect(identity).toEqual([{ singleton: true, identity_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
    expect(new EvaluationStore1764800000000().name).toBe('EvaluationStore1764800000000');
  });

  it('each database gets its own identity UUID', async () => {
    const other = await createFreshDatabase();
    try {
      const client = new Client({ connectionString: other.url });
      await client.connect();
      const [theirs] = (await client.query('SELECT identity_uuid FROM agent_runtime_eval_identity')).rows;
      await client.end();
      const [ours] = await h().sql('SELECT identity_uuid FROM agent_runtime_eval_identity');
      expect(theirs.identity_uuid).not.toBe(ours.identity_uuid);
    } finally {
      await other.drop();
    }
  });

  it('the database refuses rows breaking the checks', async () => {
    const store = await h().store();
    const job = await store.createEvaluation(A, preparedRequest());
    const refusals: Array<[string, string]> = [
      ['set_digest_check', `UPDATE agent_runtime_eval_set_revisions SET digest = 'ABC'`],
      ['job_id_check', `UPDATE agent_runtime_eval_jobs SET job_id = 'eval-1'`],
      ['job_phase_check', `UPDATE agent_runtime_eval_jobs SET phase = 'paused', finished_at_ms = 1`],
      ['job_reason_check', `UPDATE agent_runtime_eval_jobs SET reason = repeat('é', 2049)`],
      ['job_result_check', `UPDATE agent_runtime_eval_jobs SET result = '{}'`],
      ['job_finished_check', `UPDATE agent_runtime_eval_jobs SET finished_at_ms = 1`],
      ['job_finished_check', `UPDATE agent_runtime_eval_jobs SET phase = 'failed'`],
      ['usage_counters_check', `UPDATE agent_runtime_eval_usage SET bytes = -1`],
      ['usage_counters_check', `UPDATE agent_runtime_eval_usage SET sets = -1`],
      ['identity_check', `UPDATE agent_runtime_eval_identity SET singleton = false`],
    ];
    for (const [constraint, statement] of refusals) {
      await expect(h().sql(statement)).rejects.toMatchObject({ code: '23514', constraint: `agent_runtime_eval_${constraint}` });
    }
    await expect(h().sql(`INSERT INTO agent_runtime_eval_identity VALUES (true, gen_random_uuid(), 1)`)).rejects.toMatchObject({ code: '23505' });
    await h().sql(`UPDATE agent_runtime_eval_jobs SET phase = 'failed', finished_at_ms = 1, reason = repeat('é', 2048) WHERE job_id = $1`, [job.job_id]);
  });

  it('foreign keys restrict: a set revision used by a job, and a job named by a baseline, cannot be deleted', async () => {
    const store = await h().store();
    const job = await store.createEvaluation(A, preparedRequest());
    await store.transition(A, job.job_id, ['queued'], 'running');
    await store.transition(A, job.job_id, ['running'], 'completed', { result: evalResult() });
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: job.job_id });
    await expect(h().sql('DELETE FROM agent_runtime_eval_set_revisions')).rejects.toMatchObject({ code: expect.stringMatching(RESTRICT_VIOLATION), constraint: 'agent_runtime_eval_job_set_fkey' });
    await expect(h().sql('DELETE FROM agent_runtime_eval_jobs')).rejects.toMatchObject({ code: expect.stringMatching(RESTRICT_VIOLATION), constraint: 'agent_runtime_eval_baseline_job_fkey' });
    await expect(h().sql(`INSERT INTO agent_runtime_eval_baselines VALUES ('app-a', 'set-a', 'x', 'eval-${'0'.repeat(32)}', 1, 1)`)).rejects.toMatchObject({ code: '23503' });
  });

  it('text keys are COLLATE "C": bytewise order whatever the database collation', async () => {
    const rows = await h().sql<{ key: string }>(`SELECT v COLLATE "C" AS key FROM unnest(ARRAY['b', 'B', 'é', 'a']) AS v ORDER BY 1`);
    const columns = await h().sql<{ table_name: string; column_name: string; collation_name: string | null }>(
      `SELECT table_name, column_name, collation_name FROM information_schema.columns
        WHERE table_name LIKE 'agent_runtime_eval_%' AND data_type = 'text' AND collation_name = 'C' ORDER BY 1, 2`,
    );
    expect(columns.map((c) => `${c.table_name}.${c.column_name}`)).toEqual([
      'agent_runtime_eval_baselines.eval_set_id',
      'agent_runtime_eval_baselines.job_id',
      'agent_runtime_eval_baselines.name',
      'agent_runtime_eval_baselines.scope_app',
      'agent_runtime_eval_jobs.eval_set_id',
      'agent_runtime_eval_jobs.eval_set_version',
      'agent_runtime_eval_jobs.job_id',
      'agent_runtime_eval_jobs.scope_app',
      'agent_runtime_eval_set_revisions.eval_set_id',
      'agent_runtime_eval_set_revisions.eval_set_version',
      'agent_runtime_eval_set_revisions.scope_app',
      'agent_runtime_eval_usage.scope_app',
    ]);
    expect(rows.map((row) => row.key)).toEqual(['B', 'a', 'b', 'é']);
  });

  it('the down migration drops the five tables', async () => {
    const dataSource = await h().dataSource();
    const runner = dataSource.createQueryRunner();
    await new EvaluationStore1764800000000().down(runner);
    await runner.release();
    expect(await h().sql(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'agent_runtime_eval_%'`)).toEqual([]);
  });
});

describe('§2.1 table prefix and createEvalStoreMigrations', () => {
  const h = useEvalHarness('each');

  it('derived names stay within 63 characters for the longest prefix, and Postgres keeps them untruncated', async () => {
    expect(LONGEST_PREFIX).toHaveLength(41);
    const names = declaredNames(LONGEST_PREFIX);
    expect(Math.max(...names.map((name) => name.length), ...Object.values(evalTableNames(LONGEST_PREFIX)).map((name) => name.length))).toBeLessThanOrEqual(63);
    const dataSource = await withCustomPrefix(h(), LONGEST_PREFIX);
    expect(await catalogNames(h(), LONGEST_PREFIX)).toEqual(names);
    expect(await validateSchema(dataSource, evalStoreTableSpecs(LONGEST_PREFIX))).toEqual({ ok: true, mismatches: [] });
  });

  it('a store with a custom prefix works on the tables of createEvalStoreMigrations and leaves the default ones alone', async () => {
    const dataSource = await withCustomPrefix(h(), 'billing_eval_');
    const store = await h().store({ tablePrefix: 'billing_eval_' }, {}, dataSource);
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    await store.assertSchema(connection);
    const job = await store.createEvaluation(A, preparedRequest());
    await store.transition(A, job.job_id, ['queued'], 'running');
    expect(await tableCounts(h(), 'billing_eval_')).toMatchObject({ jobs: 1, set_revisions: 1, usage: 2, identity: 1 });
    expect(await tableCounts(h())).toMatchObject({ jobs: 0, set_revisions: 0, usage: 1 });
    expect(createEvalStoreMigrations('billing_eval_').map((migration) => new migration().name)).toEqual(['EvaluationStore_billing_eval_1764800000000']);
  });

  it('refuses bad prefixes, the default prefix and a bad timestamp with a TypeError', () => {
    for (const prefix of ['', 'Eval_', '1eval_', 'eval-', `${LONGEST_PREFIX}x`]) {
      expect(() => createEvalStoreMigrations(prefix)).toThrow(TypeError);
      expect(() => evalStoreTableSpecs(prefix)).toThrow(TypeError);
    }
    expect(() => createEvalStoreMigrations('agent_runtime_eval_')).toThrow(/EvaluationStore1764800000000/);
    expect(() => createEvalStoreMigrations('x_', 17648)).toThrow(TypeError);
    expect(evalStoreDdl('x_').every((statement) => !statement.includes('agent_runtime_eval_'))).toBe(true);
  });

  it('a prefix whose tables are missing fails assertSchema with schema_mismatch', async () => {
    const store = await h().store({ tablePrefix: 'missing_' });
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    const error = await evalError(store.assertSchema(connection), 'schema_mismatch');
    expect(error.details?.mismatches).toEqual(
      Object.values(evalTableNames('missing_')).map((table) => ({ table, property: 'table', expected: 'present', actual: 'missing' })),
    );
  });
});

describe('§2.2 assertSchema on a tampered table', () => {
  const h = useEvalHarness('each');

  it('reports every difference as schema_mismatch {mismatches}', async () => {
    await h().sql('ALTER TABLE agent_runtime_eval_jobs DROP CONSTRAINT agent_runtime_eval_job_reason_check');
    await h().sql('ALTER TABLE agent_runtime_eval_usage ADD COLUMN note text');
    await h().sql('ALTER TABLE agent_runtime_eval_baselines ALTER COLUMN name TYPE text COLLATE "default"');
    await h().sql('DROP INDEX agent_runtime_eval_job_active_idx');
    const store = await h().store();
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    const error = await evalError(store.assertSchema(connection), 'schema_mismatch');
    const properties = (error.details?.mismatches as Array<{ table: string; property: string }>).map((m) => `${m.table} ${m.property}`);
    expect(properties).toEqual([
      'agent_runtime_eval_jobs index:agent_runtime_eval_job_active_idx',
      'agent_runtime_eval_jobs check:agent_runtime_eval_job_reason_check',
      'agent_runtime_eval_baselines column:name',
      'agent_runtime_eval_usage column:note',
    ]);
  });

  it('a migration of the DataSource that is not applied is a mismatch too', async () => {
    const dataSource = await h().dataSource({ migrations: [...AGENT_RUNTIME_MIGRATIONS, ...createEvalStoreMigrations('pending_')] });
    const store = await h().store({}, {}, dataSource);
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    const error = await evalError(store.assertSchema(connection), 'schema_mismatch');
    expect(error.details?.mismatches).toEqual([{ table: 'agent_runtime_migrations', property: 'migration:EvaluationStore_pending_1764800000000', expected: 'applied', actual: 'pending' }]);
  });
});

describe('§2.4 ownership identity', () => {
  const h = useEvalHarness('each');

  const parsed = (identity: string) => JSON.parse(identity) as { backend: { source: string; id: string }; database: string; schema: string; table_prefix: string };

  it('is canonical JSON of {backend, database, schema, table_prefix}: the system identifier first, the identity row second', async () => {
    const store = await h().store();
    const identity = await store.ownershipIdentity();
    const [{ id: systemId }] = await h().sql<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()');
    const [{ identity_uuid: uuid }] = await h().sql<{ identity_uuid: string }>('SELECT identity_uuid FROM agent_runtime_eval_identity');
    const [{ db }] = await h().sql<{ db: string }>('SELECT current_database() AS db');
    expect(identity.identity_source).toBe('system_identifier');
    expect(identity.identities.map(parsed)).toEqual([
      { backend: { source: 'system_identifier', id: systemId }, database: db, schema: 'public', table_prefix: 'agent_runtime_eval_' },
      { backend: { source: 'identity_row', id: uuid }, database: db, schema: 'public', table_prefix: 'agent_runtime_eval_' },
    ]);
    expect(identity.identities.map((text) => canonicalJson(JSON.parse(text)))).toEqual(identity.identities);
    expect(Object.isFrozen(identity) && Object.isFrozen(identity.identities)).toBe(true);
  });

  it('two stores whose operational options differ, through the pool or a dedicated connection, have the same identity', async () => {
    const a = await h().store();
    const b = await h().store({ connectRetries: 0, statementTimeoutMs: 50, requireSynchronousStandby: true, maxJobs: 1, maxSets: 1, maxBaselines: 1, maxPageLimit: 3, maxRecordBytes: 10, maxTotalBytes: 10, maxScopeBytes: 10, maxPruneLimit: 1 });
    const connection = await b.openDedicatedConnection();
    h().track(() => connection.end());
    const identity = await a.ownershipIdentity();
    expect(await b.ownershipIdentity()).toEqual(identity);
    expect(await b.ownershipIdentity(connection)).toEqual(identity);
    expect(await a.ownershipIdentity(connection)).toEqual(identity);
  });

  it('differs for another prefix, another schema and another database', async () => {
    const base = await (await h().store()).ownershipIdentity();
    const prefixed = await withCustomPrefix(h(), 'billing_eval_');
    const other = await (await h().store({ tablePrefix: 'billing_eval_' }, {}, prefixed)).ownershipIdentity();
    await h().sql('CREATE SCHEMA tenant_a');
    const dataSource = await h().dataSource();
    const runner = dataSource.createQueryRunner();
    await runner.query('SET search_path = tenant_a');
    await new EvaluationStore1764800000000().up(runner);
    await runner.query('SET search_path = DEFAULT');
    await runner.release();
    const tenant = await (await h().store({ schema: 'tenant_a' }, {}, dataSource)).ownershipIdentity();
    const elsewhere = await createFreshDatabase();
    try {
      const remote = await (await h().store({}, {}, await h().dataSource({}, elsewhere.url))).ownershipIdentity();
      const all = [base, other, tenant, remote].flatMap((identity) => identity.identities);
      expect(new Set(all).size).toBe(all.length);
      expect(parsed(other.identities[0])).toMatchObject({ table_prefix: 'billing_eval_' });
      expect(parsed(tenant.identities[0])).toMatchObject({ schema: 'tenant_a' });
      // the system identifier is the cluster's: another database of the same server differs by its name
      expect(parsed(remote.identities[0]).backend).toEqual(parsed(base.identities[0]).backend);
    } finally {
      await elsewhere.drop();
    }
  });

  it('the schema option, not the connection\'s search_path, names the schema; a schema the connection cannot name is unavailable', async () => {
    const store = await h().store({ schema: 'public' });
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    await connection.query('SET search_path = nowhere');
    expect(parsed((await store.ownershipIdentity(connection)).identities[0]).schema).toBe('public');
    const unnamed = await h().store();
    await evalError(unnamed.ownershipIdentity(connection), 'eval_store_identity_unavailable', { sqlstate: null, socket_error: null });
  });

  it('a missing identity row or table is eval_store_identity_unavailable', async () => {
    const store = await h().store();
    await h().sql('DELETE FROM agent_runtime_eval_identity');
    await evalError(store.ownershipIdentity(), 'eval_store_identity_unavailable', { sqlstate: null, socket_error: null });
    await h().sql('DROP TABLE agent_runtime_eval_identity');
    await evalError(store.ownershipIdentity(), 'eval_store_identity_unavailable', { sqlstate: '42P01', socket_error: null });
    const dataSource = await h().dataSource();
    await dataSource.destroy();
    await evalError((await h().store({}, {}, dataSource)).ownershipIdentity(), 'eval_store_identity_unavailable');
  });

  it('without EXECUTE on pg_control_system() (SQLSTATE 42501) the identity row is the backend, the same identity a permitted role names second', async () => {
    const role = `eval_t_${randomBytes(6).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await h().sql(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    try {
      await h().sql(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
      const url = new URL(h().database.url);
      url.username = role;
      url.password = password;
      const restricted = await h().store({}, {}, await h().dataSource({}, url.toString()));
      const permitted = await (await h().store()).ownershipIdentity();
      // executable by every role until an operator revokes it
      expect(await restricted.ownershipIdentity()).toEqual(permitted);
      await h().sql('REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
      const identity = await restricted.ownershipIdentity();
      expect(identity).toEqual({ identity_source: 'identity_row', identities: [permitted.identities[1]] });
      const connection = await restricted.openDedicatedConnection();
      h().track(() => connection.end());
      expect(await restricted.ownershipIdentity(connection)).toEqual(identity);
      await h().sql('DELETE FROM agent_runtime_eval_identity');
      await evalError(restricted.ownershipIdentity(), 'eval_store_identity_unavailable');
    } finally {
      await h().close();
      await dropRole(role);
    }
  });
});

async function dropRole(role: string): Promise<void> {
  const client = new Client({ connectionString: withDatabase(process.env.DATABASE_URL as string, 'postgres') });
  await client.connect();
  try {
    await client.query(`DROP ROLE IF EXISTS ${role}`);
  } finally {
    await client.end();
  }
}

describe('the migration statements', () => {
  it('are the same for every prefix but for the names', () => {
    const strip = (prefix: string) => evalStoreDdl(prefix).map((statement) => statement.split(prefix).join('<p>'));
    expect(strip('agent_runtime_eval_')).toEqual(strip(LONGEST_PREFIX));
    expect(AGENT_RUNTIME_MIGRATIONS.map((migration) => new (migration as new () => MigrationInterface)().name)).toContain('EvaluationStore1764800000000');
  });
});

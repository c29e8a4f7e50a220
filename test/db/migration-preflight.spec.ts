/**
 * A deleted row of the migrations table (defect 4.5): `runAgentRuntimeMigrations`, which the
 * reference service runs before it boots, reports it as a schema mismatch naming the migration
 * and runs nothing, instead of failing while it re-runs the migration ("relation already exists").
 */
import { Client } from 'pg';
import type { MigrationInterface } from 'typeorm';
import { AGENT_RUNTIME_MIGRATION_OBJECTS, AGENT_RUNTIME_MIGRATIONS } from '../../migrations';
import { runAgentRuntimeMigrations } from '../../src/database/data-source.factory';
import { AGENT_RUNTIME_MIGRATIONS_TABLE as MIGRATIONS_TABLE } from '../../src/database/migration-groups';
import { SchemaValidatorError } from '../../src/database/schema-validator.errors';
import { failureReportLines } from '../../src/database/failure-report';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const names = AGENT_RUNTIME_MIGRATIONS.map((migration) => new (migration as new () => MigrationInterface)().name as string);

let database: FreshDatabase | undefined;
let admin: Client | undefined;

async function migratedDatabase(): Promise<Client> {
  database = await createFreshDatabase();
  admin = new Client({ connectionString: database.url });
  admin.on('error', () => {});
  await admin.connect();
  return admin;
}

afterEach(async () => {
  await admin?.end().catch(() => {});
  await database?.drop();
  admin = undefined;
  database = undefined;
});

const appliedRows = async (client: Client): Promise<string[]> =>
  (await client.query(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY name`)).rows.map((row: { name: string }) => row.name);

const missingRow = (name: string, actual = 'missing row, tables present') => ({ table: MIGRATIONS_TABLE, property: `migration:${name}`, expected: 'applied', actual });

describe('runAgentRuntimeMigrations before it applies anything', () => {
  it('declares, for every registered migration, what it creates', () => {
    expect(Object.keys(AGENT_RUNTIME_MIGRATION_OBJECTS).sort()).toEqual([...names].sort());
  });

  it('reports the deleted row of a migration whose tables exist as a schema mismatch naming it, and runs nothing', async () => {
    const client = await migratedDatabase();
    await client.query(`DELETE FROM ${MIGRATIONS_TABLE} WHERE name = 'PolicyAuditLog1764400000000'`);
    const before = await appliedRows(client);
    const error = await runAgentRuntimeMigrations(database!.url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaValidatorError);
    expect(error).toMatchObject({ code: 'schema_mismatch', details: { mismatches: [missingRow('PolicyAuditLog1764400000000')] } });
    expect((error as Error).message).not.toContain('already exists');
    expect(await appliedRows(client)).toEqual(before);
    expect(failureReportLines('reference service failed to start:', error)).toEqual([
      'reference service failed to start: schema_mismatch {"mismatches":1}',
      JSON.stringify(missingRow('PolicyAuditLog1764400000000')),
    ]);
  });

  it('names every migration whose row is gone: by its tables, or by its functions when it creates no table', async () => {
    const client = await migratedDatabase();
    await client.query(`DELETE FROM ${MIGRATIONS_TABLE}`);
    const error = await runAgentRuntimeMigrations(database!.url).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'schema_mismatch',
      details: {
        mismatches: [
          missingRow('PolicyAuditLog1764400000000'),
          missingRow('InvocationLedger1764500000000'),
          missingRow('PolicyAuditHeadGuard1764600000000', 'missing row, functions present'),
          missingRow('RunnerSessions1764700000000'),
          missingRow('EvaluationStore1764800000000'),
          missingRow('RuntimeArtifacts1764900000000'),
          missingRow('RuntimeMemory1764900000001'),
          missingRow('MemoryOutbox1764900000002'),
          missingRow('ClusterInstances1765000000000'),
          missingRow('ClusterAdmission1765000000001'),
          missingRow('ClusterRuns1765000000002'),
          missingRow('ClusterAdmissionFlow1765300000000'),
        ],
      },
    });
    expect(await appliedRows(client)).toEqual([]);
  });

  it('serialises runs that start together (instances of a cluster): one applies every migration, the other finds none pending', async () => {
    database = await createFreshDatabase({ migrate: false });
    const both = await Promise.all([runAgentRuntimeMigrations(database.url), runAgentRuntimeMigrations(database.url)]);
    expect(both.map((applied) => applied.length).sort((a, b) => a - b)).toEqual([0, names.length]);
  });

  it('migrates an empty database, then finds nothing pending', async () => {
    database = await createFreshDatabase({ migrate: false });
    expect(await runAgentRuntimeMigrations(database.url)).toEqual(names);
    expect(await runAgentRuntimeMigrations(database.url)).toEqual([]);
  });

  it('applies a migration that is genuinely pending while the others are applied', async () => {
    const client = await migratedDatabase();
    await client.query('DROP TRIGGER agent_runtime_policy_audit_head_append_only ON agent_runtime_policy_audit_head');
    await client.query('DROP TRIGGER agent_runtime_policy_audit_head_no_truncate ON agent_runtime_policy_audit_head');
    await client.query('DROP FUNCTION agent_runtime_policy_audit_head_guard()');
    await client.query(`DELETE FROM ${MIGRATIONS_TABLE} WHERE name = 'PolicyAuditHeadGuard1764600000000'`);
    expect(await runAgentRuntimeMigrations(database!.url)).toEqual(['PolicyAuditHeadGuard1764600000000']);
  });
});

import type { DataSource } from 'typeorm';
import { AGENT_RUNTIME_MIGRATION_OBJECTS, MIGRATIONS_BY_GROUP } from '../../migrations';
import { AGENT_RUNTIME_MIGRATION_GROUPS, AGENT_RUNTIME_MIGRATIONS_TABLE, migrationName, readMigrationGroups, type AgentRuntimeMigrationGroup } from './migration-groups';
import { findMigrationsMissingTheirRow } from './migration-preflight';
import type { SchemaMismatch } from './schema/schema-comparison';

/** The migrations of one group: those recorded in the migrations table, and those still to run. */
export interface MigrationGroupStatus {
  readonly group: AgentRuntimeMigrationGroup;
  readonly applied: readonly string[];
  readonly pending: readonly string[];
}

/** What {@link readMigrationStatus} found. */
export interface MigrationStatus {
  /** One entry per group asked for, in the groups' order. */
  readonly groups: readonly MigrationGroupStatus[];
  /** Pending migrations whose tables exist anyway (their row was deleted): a schema problem, not work to do. */
  readonly mismatches: readonly SchemaMismatch[];
}

/**
 * The applied and pending migrations of `modules` (every group when omitted) on an initialised data
 * source carrying those migrations; reads only.
 */
export async function readMigrationStatus(dataSource: DataSource, modules?: readonly AgentRuntimeMigrationGroup[]): Promise<MigrationStatus> {
  const wanted = new Set(modules === undefined ? AGENT_RUNTIME_MIGRATION_GROUPS : readMigrationGroups(modules));
  const recorded = await recordedMigrations(dataSource);
  const groups = AGENT_RUNTIME_MIGRATION_GROUPS.filter((group) => wanted.has(group)).map((group) => {
    const names = (MIGRATIONS_BY_GROUP[group] as readonly Function[]).map(migrationName);
    return Object.freeze({ group, applied: names.filter((name) => recorded.has(name)), pending: names.filter((name) => !recorded.has(name)) });
  });
  const mismatches = await findMigrationsMissingTheirRow(dataSource, AGENT_RUNTIME_MIGRATION_OBJECTS);
  return Object.freeze({ groups, mismatches });
}

async function recordedMigrations(dataSource: DataSource): Promise<Set<string>> {
  const [{ present }] = (await dataSource.query('SELECT to_regclass($1) IS NOT NULL AS present', [AGENT_RUNTIME_MIGRATIONS_TABLE])) as Array<{ present: boolean }>;
  if (!present) return new Set();
  const rows = (await dataSource.query(`SELECT name FROM ${AGENT_RUNTIME_MIGRATIONS_TABLE}`)) as Array<{ name: string }>;
  return new Set(rows.map((row) => row.name));
}

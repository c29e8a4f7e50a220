import { AGENT_RUNTIME_MIGRATIONS, MIGRATIONS_BY_GROUP } from '../../migrations';
import { DatabaseOptionsError } from './database-options.errors';

/**
 * A module whose tables a migration group creates: `'audit-log'` (the policy audit log), `'ledger'`,
 * `'sessions'` (the Runner's Postgres sessions), `'evaluation'`, `'artifacts'`, `'memory'` (memory and
 * its outbox), `'cluster'` (instances, admission across instances, runs).
 */
export type AgentRuntimeMigrationGroup = keyof typeof MIGRATIONS_BY_GROUP;

/** Every migration group, in the order of their first migration. */
export const AGENT_RUNTIME_MIGRATION_GROUPS: readonly AgentRuntimeMigrationGroup[] = Object.freeze(Object.keys(MIGRATIONS_BY_GROUP) as AgentRuntimeMigrationGroup[]);

/** The table where TypeORM records which migrations of this package ran (`migrationsTableName`). */
export const AGENT_RUNTIME_MIGRATIONS_TABLE = 'agent_runtime_migrations';

/**
 * The migration classes of `modules`, in the order they must run (all of them when `modules` is
 * omitted), for TypeORM's `migrations` option. A list that is not an array of group names (or names
 * an unknown group) is refused with `DatabaseOptionsError` `invalid_database_options`
 * `{field: 'modules'}`, never skipped.
 *
 * @example
 * new DataSource({ type: 'postgres', url, migrations: agentRuntimeMigrations(['audit-log']), migrationsTableName: AGENT_RUNTIME_MIGRATIONS_TABLE });
 */
export function agentRuntimeMigrations(modules?: readonly AgentRuntimeMigrationGroup[]): Function[] {
  if (modules === undefined) return [...AGENT_RUNTIME_MIGRATIONS];
  const chosen = new Set<Function>(readMigrationGroups(modules).flatMap((group): readonly Function[] => MIGRATIONS_BY_GROUP[group]));
  return AGENT_RUNTIME_MIGRATIONS.filter((migration) => chosen.has(migration));
}

/** `modules` checked as a list of group names (duplicates kept), or `invalid_database_options` `{field: 'modules'}`. */
export function readMigrationGroups(modules: unknown): AgentRuntimeMigrationGroup[] {
  if (!Array.isArray(modules) || !modules.every(isMigrationGroup)) throw new DatabaseOptionsError('invalid_database_options', { field: 'modules' });
  return [...modules];
}

/** True for the name of a migration group. */
export function isMigrationGroup(name: unknown): name is AgentRuntimeMigrationGroup {
  return typeof name === 'string' && Object.hasOwn(MIGRATIONS_BY_GROUP, name);
}

/** The name TypeORM records for `migration` in the migrations table. */
export function migrationName(migration: Function): string {
  const instance = new (migration as new () => { name?: string })();
  return instance.name ?? migration.name;
}

/** The group each migration of the package belongs to, by migration name. */
export function migrationGroupsByName(): ReadonlyMap<string, AgentRuntimeMigrationGroup> {
  return new Map(AGENT_RUNTIME_MIGRATION_GROUPS.flatMap((group) => (MIGRATIONS_BY_GROUP[group] as readonly Function[]).map((migration) => [migrationName(migration), group] as const)));
}

import { advisoryLockKey } from './instance-lock';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { AGENT_RUNTIME_MIGRATION_OBJECTS, AGENT_RUNTIME_MIGRATIONS } from '../../migrations';
import { assertMigrationRowsPresent } from './migration-preflight';

/** Name of the table where TypeORM records the applied migrations of this package. */
export const MIGRATIONS_TABLE = 'agent_runtime_migrations';

/**
 * Options of a TypeORM data source on `url` carrying this package's migrations. Schemas are only
 * ever created by migrations: `synchronize` is off, and a connection failure is reported at once
 * instead of being retried.
 */
export function agentRuntimeDataSourceOptions(url: string, overrides: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrationsRun: false,
    migrations: AGENT_RUNTIME_MIGRATIONS,
    migrationsTableName: MIGRATIONS_TABLE,
    connectTimeoutMS: 5000,
    ...overrides,
  } as DataSourceOptions;
}

/** A new (not yet initialised) data source on `url` with this package's migrations. */
export function createAgentRuntimeDataSource(url: string, overrides: Partial<DataSourceOptions> = {}): DataSource {
  return new DataSource(agentRuntimeDataSourceOptions(url, overrides));
}

/**
 * Applies every pending migration, each in its own transaction; returns their names. A pending
 * migration whose tables already exist (its row in the migrations table was deleted) runs
 * nothing and rejects with `SchemaValidatorError` `schema_mismatch` naming it.
 */
export async function runAgentRuntimeMigrations(url: string): Promise<string[]> {
  const dataSource = createAgentRuntimeDataSource(url);
  await dataSource.initialize();
  // instances of a cluster start together: one runs the migrations, the others then find none pending
  const lockHolder = dataSource.createQueryRunner();
  try {
    await lockHolder.connect();
    await lockHolder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await assertMigrationRowsPresent(dataSource, AGENT_RUNTIME_MIGRATION_OBJECTS);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lockHolder.release().catch(() => undefined);
    await dataSource.destroy();
  }
}

/** Session advisory lock serialising migration runs on one database (released with its connection). */
const MIGRATION_LOCK_KEY = advisoryLockKey('agent_runtime.migrations', 'run');

import { DataSource, type DataSourceOptions } from 'typeorm';
import { AGENT_RUNTIME_MIGRATION_OBJECTS } from '../../migrations';
import { DatabaseOptionsError } from './database-options.errors';
import { advisoryLockKey } from './instance-lock';
import { AGENT_RUNTIME_MIGRATIONS_TABLE, agentRuntimeMigrations, type AgentRuntimeMigrationGroup } from './migration-groups';
import { assertMigrationRowsPresent } from './migration-preflight';

/** Which migration groups a data source or a migration run carries. */
export interface AgentRuntimeMigrationSelection {
  /** The modules whose tables the app uses. @default every group */
  readonly modules?: readonly AgentRuntimeMigrationGroup[];
}

/** {@link AgentRuntimeMigrationSelection} plus any TypeORM option, which wins over the package's (`migrations` too). */
export type AgentRuntimeDataSourceOverrides = AgentRuntimeMigrationSelection & Partial<DataSourceOptions>;

/**
 * Options of a TypeORM Postgres data source on `url` carrying the migrations of `modules` (every
 * group when omitted) and {@link AGENT_RUNTIME_MIGRATIONS_TABLE}. Schemas are only ever created by
 * migrations: `synchronize` and `migrationsRun` are off, and a connection failure is reported at once.
 * A missing or empty `url` is `DatabaseOptionsError` `invalid_database_options` `{field: 'url'}`, so
 * `process.env.DATABASE_URL` can be passed as it is; an unknown module `{field: 'modules'}`.
 *
 * @example
 * TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(process.env.DATABASE_URL, { modules: ['audit-log'] }));
 */
export function agentRuntimeDataSourceOptions(url: string | undefined, options: AgentRuntimeDataSourceOverrides = {}): DataSourceOptions {
  if (typeof url !== 'string' || url.trim() === '') throw new DatabaseOptionsError('invalid_database_options', { field: 'url' });
  const { modules, ...overrides } = options;
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrationsRun: false,
    migrations: agentRuntimeMigrations(modules),
    migrationsTableName: AGENT_RUNTIME_MIGRATIONS_TABLE,
    connectTimeoutMS: 5000,
    ...overrides,
  } as DataSourceOptions;
}

/** A new (not yet initialised) data source with {@link agentRuntimeDataSourceOptions}. */
export function createAgentRuntimeDataSource(url: string | undefined, options: AgentRuntimeDataSourceOverrides = {}): DataSource {
  return new DataSource(agentRuntimeDataSourceOptions(url, options));
}

/**
 * Applies every pending migration of `modules` (every group when omitted), each in its own
 * transaction, and returns their names. Runs of several instances on one database take turns on an
 * advisory lock, so one applies and the others find nothing pending. A pending migration whose tables
 * already exist (its row in the migrations table was deleted) runs nothing and rejects with
 * `SchemaValidatorError` `schema_mismatch` naming it.
 *
 * @example
 * await runAgentRuntimeMigrations(process.env.DATABASE_URL, { modules: ['audit-log', 'ledger'] });
 */
export async function runAgentRuntimeMigrations(url: string | undefined, selection: AgentRuntimeMigrationSelection = {}): Promise<string[]> {
  const dataSource = createAgentRuntimeDataSource(url, selection.modules === undefined ? {} : { modules: selection.modules });
  await dataSource.initialize();
  try {
    return await applyAgentRuntimeMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * {@link runAgentRuntimeMigrations} on an initialised data source: the pending migrations it carries,
 * under the advisory lock and after the preflight; the data source stays open.
 */
export async function applyAgentRuntimeMigrations(dataSource: DataSource): Promise<string[]> {
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
  }
}

/** Session advisory lock serialising migration runs on one database (released with its connection). */
const MIGRATION_LOCK_KEY = advisoryLockKey('agent_runtime.migrations', 'run');

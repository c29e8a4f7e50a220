import type { DataSource, QueryRunner } from 'typeorm';
import { readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn, isBoolean } from '../../shared/options/option-rules';
import { systemClock, type Clock } from '../../shared/time/clock';
import { retry } from '../../shared/time/retry';
import { within } from '../../shared/time/timeout';
import { classifyFailure } from '../postgres-failure';
import { readSchemaCatalog, readSynchronousCommit } from './schema-catalog';
import type { CatalogQuery, CatalogSnapshot } from './schema-catalog.types';
import { compareMigrations, compareSettings, compareTable, type SchemaMismatch } from './schema-comparison';
import { SchemaValidatorError } from '../schema-validator.errors';
import { assertTableSpec, isPostgresIdentifier, type TableSpec } from './table-spec';

/** A connection the component opened outside the pool (`pg.Client` fits). */
export interface DedicatedConnection {
  query(sql: string): Promise<{ readonly rows: readonly unknown[] }>;
}

/** Options of {@link validateSchema} and {@link assertSchema}. */
export interface SchemaValidationOptions {
  /** Postgres schema the declared tables live in. @default current_schema() */
  schema?: string;
  /** How many times a connection failure is retried; a mismatch never is. @default 2 */
  connectRetries?: number;
  /** Pause between connection attempts, in milliseconds. @default 500 */
  retryDelayMs?: number;
  /** Time allowed to obtain a pooled connection per attempt, in milliseconds. @default 2000 */
  connectTimeoutMs?: number;
  /**
   * Require a synchronous standby: `synchronous_standby_names` non-empty and `synchronous_commit`
   * `on`, `remote_write` or `remote_apply` on every connection. @default false
   */
  requireSynchronousStandby?: boolean;
  /** Connections the component opens beside the pool; `synchronous_commit` is read on each. @default [] */
  dedicatedConnections?: readonly DedicatedConnection[];
  /** Clock of the connect timeout and of the pauses between attempts. @default systemClock */
  clock?: Clock;
}

/** The outcome of a validation: frozen, JSON-safe, `ok` exactly when `mismatches` is empty. */
export type SchemaReport = {
  readonly ok: boolean;
  readonly mismatches: readonly SchemaMismatch[];
};

/**
 * Compares `specs` with the live catalog of `dataSource` (initialised, Postgres) and collects
 * every difference (spec 04 §1.3) into one report: settings, then migrations, then the tables in
 * declaration order. Catalog reads run in one READ ONLY, REPEATABLE READ transaction. Connection
 * failures are retried `connectRetries` times and then reject with `SchemaValidatorError`
 * `database_unreachable`; malformed specs or options reject with a `TypeError`.
 *
 * @example
 * const report = await validateSchema(dataSource, [LEDGER_TABLE_SPEC], { schema: 'public' });
 * if (!report.ok) console.error(report.mismatches);
 */
export async function validateSchema(
  dataSource: DataSource,
  specs: readonly TableSpec[],
  options: SchemaValidationOptions = {},
): Promise<SchemaReport> {
  const settings = resolveOptions(dataSource, specs, options);
  const clock = settings.clock;
  const { snapshot, dedicated } = await withConnectRetries(settings, clock, () => readOnce(dataSource, specs, settings, clock));
  const mismatches = [
    ...compareSettings(
      { pooled: snapshot.synchronousCommit, dedicated, synchronousStandbyNames: snapshot.synchronousStandbyNames },
      settings.requireSynchronousStandby,
    ),
    ...compareMigrations(settings.migrationsTable, settings.migrations, snapshot.appliedMigrations),
    ...specs.flatMap((spec) => compareTable(spec, tableOf(snapshot, spec.name), snapshot.schema, snapshot.functions)),
  ];
  return Object.freeze({ ok: mismatches.length === 0, mismatches: Object.freeze(mismatches) });
}

/**
 * {@link validateSchema}, then throws the error `makeError` builds from the mismatches when there
 * is any, so each module fails start-up with its own class and code.
 *
 * @example
 * await assertSchema(dataSource, [LEDGER_TABLE_SPEC], options,
 *   (mismatches) => new LedgerError('schema_mismatch', { mismatches }));
 */
export async function assertSchema<E extends Error>(
  dataSource: DataSource,
  specs: readonly TableSpec[],
  options: SchemaValidationOptions,
  makeError: (mismatches: readonly SchemaMismatch[]) => E,
): Promise<SchemaReport> {
  const report = await validateSchema(dataSource, specs, options);
  if (!report.ok) throw makeError(report.mismatches);
  return report;
}

interface ResolvedOptions {
  readonly clock: Clock;
  readonly schema: string | null;
  readonly connectRetries: number;
  readonly retryDelayMs: number;
  readonly connectTimeoutMs: number;
  readonly requireSynchronousStandby: boolean;
  readonly dedicatedConnections: readonly DedicatedConnection[];
  readonly migrations: readonly string[];
  readonly migrationsTable: string;
  readonly migrationsSchema: string | null;
}

const OPTION_RULES: OptionRules<keyof SchemaValidationOptions> = {
  schema: isPostgresIdentifier,
  connectRetries: integerIn(0),
  retryDelayMs: integerIn(0),
  connectTimeoutMs: integerIn(1),
  requireSynchronousStandby: isBoolean,
  dedicatedConnections: (value) => Array.isArray(value) && value.every((c) => typeof (c as Partial<DedicatedConnection> | null)?.query === 'function'),
  clock: (value) => typeof value === 'object' && value !== null,
};

/** The message of each rule, for the `TypeError` of a malformed option (a programming error of the caller). */
const OPTION_RULE_TEXT: Readonly<Record<keyof SchemaValidationOptions, string>> = {
  schema: 'schema must match ^[a-z_][a-z0-9_]{0,62}$',
  connectRetries: 'connectRetries must be an integer >= 0',
  retryDelayMs: 'retryDelayMs must be an integer >= 0',
  connectTimeoutMs: 'connectTimeoutMs must be an integer >= 1',
  requireSynchronousStandby: 'requireSynchronousStandby must be a boolean',
  dedicatedConnections: 'dedicatedConnections must be connections with a query method',
  clock: 'clock must be a Clock',
};

function resolveOptions(dataSource: DataSource, specs: readonly TableSpec[], options: SchemaValidationOptions): ResolvedOptions {
  if (!dataSource?.isInitialized || dataSource.options.type !== 'postgres') {
    throw new TypeError('validateSchema needs an initialised Postgres DataSource');
  }
  if (!Array.isArray(specs)) throw new TypeError('specs must be an array of TableSpec');
  const names = new Set<string>();
  for (const spec of specs) {
    assertTableSpec(spec);
    if (names.has(spec.name)) throw new TypeError(`TableSpec ${spec.name} is declared twice`);
    names.add(spec.name);
  }
  const read = readOptions(options, OPTION_RULES, { name: 'options', unknownKeys: 'ignore' });
  if (!read.ok) throw new TypeError(read.fields.map((field) => OPTION_RULE_TEXT[field as keyof typeof OPTION_RULE_TEXT] ?? `${field} is not a plain object`).join('; '));
  const given = read.values as Omit<SchemaValidationOptions, 'clock'>;
  const { schema, connectRetries = 2, retryDelayMs = 500, connectTimeoutMs = 2000, requireSynchronousStandby = false, dedicatedConnections = [] } = given;
  const migrationsTable = dataSource.options.migrationsTableName ?? 'migrations';
  const migrationsSchema = (dataSource.options as { schema?: string }).schema ?? null;
  if (!isPostgresIdentifier(migrationsTable)) throw new TypeError('the migrations table name must match ^[a-z_][a-z0-9_]{0,62}$');
  if (migrationsSchema !== null && !isPostgresIdentifier(migrationsSchema)) {
    throw new TypeError('the DataSource schema must match ^[a-z_][a-z0-9_]{0,62}$');
  }
  // TypeORM names a migration by its `name` property, else by its class name
  const migrations = dataSource.migrations.map((migration) => migration.name ?? migration.constructor.name);
  return {
    clock: read.values.clock === undefined ? systemClock : (read.values.clock as Clock),
    schema: schema ?? null,
    connectRetries,
    retryDelayMs,
    connectTimeoutMs,
    requireSynchronousStandby,
    dedicatedConnections,
    migrations,
    migrationsTable,
    migrationsSchema,
  };
}

async function readOnce(
  dataSource: DataSource,
  specs: readonly TableSpec[],
  options: ResolvedOptions,
  clock: Clock,
): Promise<{ snapshot: CatalogSnapshot; dedicated: string[] }> {
  const queryRunner = dataSource.createQueryRunner('master');
  await connectWithin(queryRunner, options.connectTimeoutMs, clock);
  let inTransaction = false;
  try {
    await queryRunner.query('START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    inTransaction = true;
    const query: CatalogQuery = (sql, parameters) => queryRunner.query(sql, parameters ? [...parameters] : undefined);
    const snapshot = await readSchemaCatalog(query, {
      schema: options.schema,
      tableNames: specs.map((spec) => spec.name),
      functionNames: specs.flatMap((spec) => (spec.triggers ?? []).map((trigger) => trigger.function)),
      migrationsTable: options.migrations.length > 0 ? { schema: options.migrationsSchema, name: options.migrationsTable } : null,
    });
    await queryRunner.query('COMMIT');
    inTransaction = false;
    const dedicated: string[] = [];
    for (const connection of options.dedicatedConnections) {
      dedicated.push(await readSynchronousCommit(async (sql) => (await connection.query(sql)).rows as Record<string, unknown>[]));
    }
    return { snapshot, dedicated };
  } finally {
    if (inTransaction) await queryRunner.query('ROLLBACK').catch(() => undefined);
    await queryRunner.release();
  }
}

/** The connect timeout of one attempt ran out before the pool handed out a connection. */
class ConnectTimeoutError extends Error {
  readonly code = 'connect_timeout';
}

async function connectWithin(queryRunner: QueryRunner, timeoutMs: number, clock: Clock): Promise<void> {
  const connecting = queryRunner.connect();
  try {
    await within(connecting, timeoutMs, clock, () => new ConnectTimeoutError('connect timeout'));
  } catch (error) {
    // releasing before the pool answers would leak the connection it hands out later
    connecting.then(
      () => queryRunner.release(),
      () => undefined,
    );
    throw error;
  }
}

async function withConnectRetries<T>(options: ResolvedOptions, clock: Clock, attempt: () => Promise<T>): Promise<T> {
  let attempts = 0;
  try {
    return await retry(
      () => ((attempts += 1), attempt()),
      { attempts: options.connectRetries + 1, delayMs: options.retryDelayMs, retryable: (error) => classifyFailure(error).connection },
      clock,
    );
  } catch (error) {
    const failure = classifyFailure(error);
    throw new SchemaValidatorError(failure.connection ? 'database_unreachable' : 'catalog_read_failed', { attempts, ...failure.codes });
  }
}

function tableOf(snapshot: CatalogSnapshot, name: string) {
  const table = snapshot.tables.get(name);
  if (!table) throw new Error(`catalog snapshot lacks ${name}`);
  return table;
}

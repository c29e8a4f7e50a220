import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';
import { readSchemaCatalog, readSynchronousCommit, type CatalogQuery, type CatalogSnapshot } from './schema-catalog';
import { compareMigrations, compareSettings, compareTable, type SchemaMismatch } from './schema-comparison';
import { SchemaValidatorError } from './schema-validator.errors';
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
  const { snapshot, dedicated } = await withConnectRetries(settings, () => readOnce(dataSource, specs, settings));
  const mismatches = [
    ...compareSettings(
      { pooled: snapshot.synchronousCommit, dedicated, synchronousStandbyNames: snapshot.synchronousStandbyNames },
      settings.requireSynchronousStandby,
    ),
    ...compareMigrations(settings.migrationsTable, settings.migrations, snapshot.appliedMigrations),
    ...specs.flatMap((spec) => compareTable(spec, tableOf(snapshot, spec.name), snapshot.schema)),
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
  const { schema, connectRetries = 2, retryDelayMs = 500, connectTimeoutMs = 2000 } = options;
  const { requireSynchronousStandby = false, dedicatedConnections = [] } = options;
  if (schema !== undefined && !isPostgresIdentifier(schema)) throw new TypeError('schema must match ^[a-z_][a-z0-9_]{0,62}$');
  if (!Number.isSafeInteger(connectRetries) || connectRetries < 0) throw new TypeError('connectRetries must be an integer >= 0');
  if (!Number.isSafeInteger(retryDelayMs) || retryDelayMs < 0) throw new TypeError('retryDelayMs must be an integer >= 0');
  if (!Number.isSafeInteger(connectTimeoutMs) || connectTimeoutMs < 1) throw new TypeError('connectTimeoutMs must be an integer >= 1');
  if (typeof requireSynchronousStandby !== 'boolean') throw new TypeError('requireSynchronousStandby must be a boolean');
  if (!Array.isArray(dedicatedConnections) || !dedicatedConnections.every((c) => typeof c?.query === 'function')) {
    throw new TypeError('dedicatedConnections must be connections with a query method');
  }
  const migrationsTable = dataSource.options.migrationsTableName ?? 'migrations';
  const migrationsSchema = (dataSource.options as { schema?: string }).schema ?? null;
  if (!isPostgresIdentifier(migrationsTable)) throw new TypeError('the migrations table name must match ^[a-z_][a-z0-9_]{0,62}$');
  if (migrationsSchema !== null && !isPostgresIdentifier(migrationsSchema)) {
    throw new TypeError('the DataSource schema must match ^[a-z_][a-z0-9_]{0,62}$');
  }
  // TypeORM names a migration by its `name` property, else by its class name
  const migrations = dataSource.migrations.map((migration) => migration.name ?? migration.constructor.name);
  return {
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
): Promise<{ snapshot: CatalogSnapshot; dedicated: string[] }> {
  const queryRunner = dataSource.createQueryRunner('master');
  await connectWithin(queryRunner, options.connectTimeoutMs);
  let inTransaction = false;
  try {
    await queryRunner.query('START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    inTransaction = true;
    const query: CatalogQuery = (sql, parameters) => queryRunner.query(sql, parameters ? [...parameters] : undefined);
    const snapshot = await readSchemaCatalog(query, {
      schema: options.schema,
      tableNames: specs.map((spec) => spec.name),
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

async function connectWithin(queryRunner: QueryRunner, timeoutMs: number): Promise<void> {
  const connecting = queryRunner.connect();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectTimeoutError('connect timeout')), timeoutMs);
  });
  try {
    await Promise.race([connecting, timeout]);
  } catch (error) {
    // releasing before the pool answers would leak the connection it hands out later
    connecting.then(
      () => queryRunner.release(),
      () => undefined,
    );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function withConnectRetries<T>(options: ResolvedOptions, attempt: () => Promise<T>): Promise<T> {
  for (let attempts = 1; ; attempts += 1) {
    try {
      return await attempt();
    } catch (error) {
      const failure = classifyFailure(error);
      if (!failure.connection) throw new SchemaValidatorError('catalog_read_failed', { attempts, ...failure.codes });
      if (attempts > options.connectRetries) throw new SchemaValidatorError('database_unreachable', { attempts, ...failure.codes });
      await sleep(options.retryDelayMs);
    }
  }
}

const SOCKET_ERRORS = new Set([
  'connect_timeout',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** `57P01`/`57P02` end a pooled session when the server shuts down or crashes; the next attempt gets a new one. */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** node-postgres reports a lost or timed-out connection with these messages and no code. */
const PG_CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

interface FailureClass {
  readonly connection: boolean;
  readonly codes: { sqlstate: string | null; socket_error: string | null };
}

/** Whether `error` (or the driver error TypeORM wraps) is a connection failure, with its codes. */
export function classifyFailure(error: unknown): FailureClass {
  let sqlstate: string | null = null;
  let socketError: string | null = null;
  let pgConnectionMessage = false;
  const seen = new Set<unknown>();
  for (let current: unknown = error; typeof current === 'object' && current !== null && !seen.has(current); ) {
    seen.add(current);
    const { code, message, driverError, cause } = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) sqlstate ??= code;
    else if (typeof code === 'string' && SOCKET_ERRORS.has(code)) socketError ??= code;
    if (typeof message === 'string' && PG_CONNECTION_MESSAGE.test(message)) pgConnectionMessage = true;
    current = driverError ?? cause;
  }
  const connection =
    socketError !== null || pgConnectionMessage || (sqlstate !== null && (sqlstate.startsWith('08') || CONNECTION_SQLSTATES.has(sqlstate)));
  return { connection, codes: { sqlstate, socket_error: socketError } };
}

function tableOf(snapshot: CatalogSnapshot, name: string) {
  const table = snapshot.tables.get(name);
  if (!table) throw new Error(`catalog snapshot lacks ${name}`);
  return table;
}

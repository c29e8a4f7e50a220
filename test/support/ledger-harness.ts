import { Client } from 'pg';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { InvocationLedger, type InvocationLedgerDeps, type InvocationMetadata } from '../../src/ledger/invocation-ledger';
import type { InvocationLedgerOptions } from '../../src/ledger/ledger-options';
import { LedgerError, type LedgerErrorCode } from '../../src/ledger/ledger.errors';
import { createFreshDatabase, type FreshDatabase, type FreshDatabaseOptions } from './fresh-database';

/** Metadata of the invocations the ledger suites create. */
export const META: InvocationMetadata = Object.freeze({ workflowId: 'helper', workflowVersion: '1', kind: 'agent_run' });

/** A fresh database with an admin connection, and DataSources and ledgers that are closed afterwards. */
export interface LedgerHarness {
  readonly database: FreshDatabase;
  /** A plain connection for setup and inspection SQL. */
  readonly admin: Client;
  /** A new initialised DataSource on the database (its own pool, i.e. its own sessions). */
  dataSource(overrides?: Partial<DataSourceOptions>, url?: string): Promise<DataSource>;
  /** A started ledger; on a new DataSource of its own unless one is given. */
  ledger(options?: InvocationLedgerOptions, deps?: InvocationLedgerDeps, dataSource?: DataSource): Promise<InvocationLedger>;
  /** Runs SQL on the admin connection and returns its rows. */
  sql<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  /** Granted advisory locks in this database (pg_locks is cluster-wide): holder pid and bigint key. */
  advisoryLocks(): Promise<Array<{ pid: number; key: string }>>;
  /** Terminates the sessions holding advisory locks in this database (the ledgers' lock connections). */
  terminateLockHolders(): Promise<void>;
  close(): Promise<void>;
}

export async function openLedgerHarness(options: FreshDatabaseOptions = {}): Promise<LedgerHarness> {
  const database = await createFreshDatabase(options);
  const admin = new Client({ connectionString: database.url });
  admin.on('error', () => {});
  await admin.connect();
  const dataSources: DataSource[] = [];
  const ledgers: InvocationLedger[] = [];
  const harness: LedgerHarness = {
    database,
    admin,
    async dataSource(overrides = {}, url = database.url) {
      const dataSource = createAgentRuntimeDataSource(url, overrides);
      dataSources.push(dataSource);
      return dataSource.initialize();
    },
    async ledger(ledgerOptions, deps, dataSource) {
      const ledger = new InvocationLedger(dataSource ?? (await harness.dataSource()), ledgerOptions, deps);
      ledgers.push(ledger);
      await ledger.start();
      return ledger;
    },
    async sql<T>(text: string, values?: unknown[]) {
      return (await admin.query(text, values)).rows as T[];
    },
    async advisoryLocks() {
      return harness.sql<{ pid: number; key: string }>(
        `SELECT pid, ((classid::bigint << 32) | objid::bigint)::text AS key FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
    },
    async terminateLockHolders() {
      for (const { pid } of await harness.advisoryLocks()) await harness.sql('SELECT pg_terminate_backend($1, 5000)', [pid]);
    },
    async close() {
      await Promise.all(ledgers.splice(0).map((ledger) => ledger.close().catch(() => {})));
      await Promise.all(dataSources.splice(0).map((dataSource) => (dataSource.isInitialized ? dataSource.destroy().catch(() => {}) : undefined)));
      await admin.end().catch(() => {});
      await database.drop();
    },
  };
  return harness;
}

/**
 * Registers `beforeEach`/`afterEach` so that every test of the enclosing block gets a fresh,
 * migrated database of its own; the returned function gives the current harness.
 */
export function useLedgerHarness(options: FreshDatabaseOptions = {}): () => LedgerHarness {
  let current: LedgerHarness | undefined;
  beforeEach(async () => {
    current = await openLedgerHarness(options);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('no ledger harness: call inside a test');
    return current;
  };
}

/** Runs SQL on the test server's own database (not the fresh one), e.g. `ALTER DATABASE` of the fresh one. */
export async function serverSql(text: string): Promise<void> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Awaits `promise`, expecting a `LedgerError` with `code` (and `details` when given); returns it. */
export async function ledgerError(promise: Promise<unknown>, code: LedgerErrorCode, details?: Record<string, unknown>): Promise<LedgerError> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  if (!LedgerError.isLedgerError(error)) throw new Error(`expected LedgerError ${code}, got ${error === undefined ? 'success' : String(error)}`);
  expect(error.code).toBe(code);
  if (details) expect(error.details).toEqual(details);
  return error;
}

/** The raw row of `id`, owner token included (for assertions that nothing changed). */
export async function rawRow(harness: LedgerHarness, id: string, table = 'agent_runtime_invocations'): Promise<Record<string, unknown> | undefined> {
  const [row] = await harness.sql(`SELECT * FROM ${table} WHERE id = $1`, [id]);
  return row;
}

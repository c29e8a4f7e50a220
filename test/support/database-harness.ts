import { Client } from 'pg';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { createFreshDatabase, type FreshDatabase, type FreshDatabaseOptions } from './fresh-database';

/** A fresh database with an admin connection, and what tests opened on it, closed together. */
export interface DatabaseHarness {
  readonly database: FreshDatabase;
  /** A plain connection for setup and inspection SQL. */
  readonly admin: Client;
  /** A new initialised DataSource on the database (its own pool, i.e. its own sessions). */
  dataSource(overrides?: Partial<DataSourceOptions>, url?: string): Promise<DataSource>;
  /** Runs SQL on the admin connection and returns its rows. */
  sql<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  /** Something to close with the harness, before the DataSources (a ledger, a service, a connection). */
  track(closeable: () => Promise<unknown>): void;
  close(): Promise<void>;
}

/** Creates a fresh (by default migrated) database and its admin connection. */
export async function openDatabaseHarness(options: FreshDatabaseOptions = {}): Promise<DatabaseHarness> {
  const database = await createFreshDatabase(options);
  const admin = new Client({ connectionString: database.url });
  admin.on('error', () => {});
  await admin.connect();
  const dataSources: DataSource[] = [];
  const closeables: Array<() => Promise<unknown>> = [];
  return {
    database,
    admin,
    async dataSource(overrides = {}, url = database.url) {
      const dataSource = createAgentRuntimeDataSource(url, overrides);
      dataSources.push(dataSource);
      return dataSource.initialize();
    },
    async sql<T>(text: string, values?: unknown[]) {
      return (await admin.query(text, values)).rows as T[];
    },
    track(closeable) {
      closeables.push(closeable);
    },
    async close() {
      await Promise.all(closeables.splice(0).map((close) => close().catch(() => {})));
      await Promise.all(dataSources.splice(0).map((dataSource) => (dataSource.isInitialized ? dataSource.destroy().catch(() => {}) : undefined)));
      await admin.end().catch(() => {});
      await database.drop();
    },
  };
}

/**
 * Registers hooks giving the enclosing block a harness built by `open`: one per test (`'each'`, for
 * tests that count rows or fill caps) or one for the whole block (`'all'`). The returned function
 * gives the current harness.
 */
export function useHarness<H extends { close(): Promise<void> }>(open: () => Promise<H>, per: 'each' | 'all' = 'each'): () => H {
  let current: H | undefined;
  const start = async () => {
    current = await open();
  };
  const stop = async () => {
    await current?.close();
    current = undefined;
  };
  if (per === 'each') {
    beforeEach(start);
    afterEach(stop);
  } else {
    beforeAll(start);
    afterAll(stop);
  }
  return () => {
    if (!current) throw new Error('no harness: call inside a test');
    return current;
  };
}

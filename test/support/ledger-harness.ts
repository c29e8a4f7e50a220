import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { InvocationLedger, type InvocationLedgerDeps, type InvocationMetadata } from '../../src/ledger/invocation-ledger';
import type { InvocationLedgerOptions } from '../../src/ledger/ledger-options';
import { LedgerError, type LedgerErrorCode } from '../../src/ledger/ledger.errors';
import { openDatabaseHarness, useHarness, type DatabaseHarness } from './database-harness';
import type { FreshDatabaseOptions } from './fresh-database';

/** Metadata of the invocations the ledger suites create. */
export const META: InvocationMetadata = Object.freeze({ workflowId: 'helper', workflowVersion: '1', kind: 'agent_run' });

/** A database harness with started ledgers (closed with it) and a view of the advisory locks. */
export interface LedgerHarness extends DatabaseHarness {
  /** A started ledger; on a new DataSource of its own unless one is given. */
  ledger(options?: InvocationLedgerOptions, deps?: InvocationLedgerDeps, dataSource?: DataSource): Promise<InvocationLedger>;
  /** Granted advisory locks in this database (pg_locks is cluster-wide): holder pid and bigint key. */
  advisoryLocks(): Promise<Array<{ pid: number; key: string }>>;
  /** Terminates the sessions holding advisory locks in this database (the ledgers' lock connections). */
  terminateLockHolders(): Promise<void>;
}

export async function openLedgerHarness(options: FreshDatabaseOptions = {}): Promise<LedgerHarness> {
  const base = await openDatabaseHarness(options);
  const harness: LedgerHarness = {
    ...base,
    async ledger(ledgerOptions, deps, dataSource) {
      const ledger = new InvocationLedger(dataSource ?? (await base.dataSource()), ledgerOptions, deps);
      base.track(() => ledger.close());
      await ledger.start();
      return ledger;
    },
    async advisoryLocks() {
      return base.sql<{ pid: number; key: string }>(
        `SELECT pid, ((classid::bigint << 32) | objid::bigint)::text AS key FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
    },
    async terminateLockHolders() {
      for (const { pid } of await harness.advisoryLocks()) await base.sql('SELECT pg_terminate_backend($1, 5000)', [pid]);
    },
  };
  return harness;
}

/**
 * Registers `beforeEach`/`afterEach` so that every test of the enclosing block gets a fresh,
 * migrated database of its own; the returned function gives the current harness.
 */
export function useLedgerHarness(options: FreshDatabaseOptions = {}): () => LedgerHarness {
  return useHarness(() => openLedgerHarness(options));
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

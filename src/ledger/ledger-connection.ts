import type { DataSource } from 'typeorm';
import { classifyFailure } from '../database/schema-validator';
import type { LockConnection } from './instance-lock';
import { LedgerError } from './ledger.errors';

/** A pooled client of node-postgres. */
interface PooledClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  release(destroy?: boolean | Error): void;
}

/** The node-postgres pool behind a TypeORM Postgres DataSource (`driver.master`). */
export interface PgPool {
  connect(): Promise<PooledClient>;
  readonly options: Record<string, unknown>;
  readonly Client: new (config: Record<string, unknown>) => LockConnection & { connect(): Promise<void> };
}

/** Connect timeout of one attempt to open the lock connection (spec 04 §1.4). */
export const LOCK_CONNECT_TIMEOUT_MS = 2000;
/** First TCP keep-alive probe on an idle lock connection, unless the pool options set one. */
export const LOCK_KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/**
 * The pg pool of an initialised Postgres DataSource, or `null`. The ledger issues its statements on
 * it directly: one statement per operation needs no TypeORM query runner around it.
 */
export function poolOf(dataSource: unknown): PgPool | null {
  try {
    const source = dataSource as DataSource;
    if (!source?.isInitialized || source.options.type !== 'postgres') return null;
    const pool = (source.driver as unknown as { master?: PgPool }).master;
    return pool && typeof pool.connect === 'function' && typeof pool.Client === 'function' ? pool : null;
  } catch {
    return null;
  }
}

/**
 * Runs one statement on a pooled connection. Failing to get a connection is `ledger_unavailable`;
 * a rollback (serialisation failure, deadlock, statement timeout, connection lost mid-statement)
 * is `transaction_aborted`; any other database error is `ledger_unavailable`. Only the SQLSTATE
 * (and the Node socket code) is kept, never the database's text.
 */
export async function runStatement(pool: PgPool, text: string, values: unknown[]): Promise<Array<Record<string, unknown>>> {
  let client: PooledClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new LedgerError('ledger_unavailable', failureCodes(error));
  }
  try {
    const { rows } = await client.query(text, values);
    client.release();
    return rows;
  } catch (error) {
    const failure = classifyFailure(error);
    // a connection that failed mid-statement must not go back to the pool
    client.release(failure.connection ? true : undefined);
    throw statementFailure(error);
  }
}

const ROLLBACK_SQLSTATES = new Set(['40001', '40P01', '57014']);

export function statementFailure(error: unknown): LedgerError {
  const failure = classifyFailure(error);
  const codes = failureCodes(error);
  if (failure.connection || (failure.codes.sqlstate !== null && ROLLBACK_SQLSTATES.has(failure.codes.sqlstate))) {
    return new LedgerError('transaction_aborted', codes);
  }
  return new LedgerError('ledger_unavailable', codes);
}

function failureCodes(error: unknown): { sqlstate: string | null; socket_error: string | null } {
  return classifyFailure(error).codes;
}

/**
 * Opens the dedicated lock connection: a `pg.Client` of the pool's own class with the pool's
 * connection options (credentials, host, TLS, application name), TCP keep-alive on, and a 2000 ms
 * connect timeout. It is never taken from the pool, so the pool can neither recycle nor share it.
 */
export function lockConnectionOpener(pool: PgPool): () => Promise<LockConnection> {
  return async () => {
    const options = pool.options;
    const client = new pool.Client({
      ...options,
      // the pool keeps the password as a non-enumerable property, which a spread drops
      password: options.password,
      keepAlive: true,
      keepAliveInitialDelayMillis: options.keepAliveInitialDelayMillis ?? LOCK_KEEPALIVE_INITIAL_DELAY_MS,
      connectionTimeoutMillis: LOCK_CONNECT_TIMEOUT_MS,
    });
    // an 'error' without a listener would crash the process; the lock watches it once connected
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  };
}

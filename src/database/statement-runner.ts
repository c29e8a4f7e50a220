import { classifyFailure, type PostgresFailure } from './postgres-failure';
import type { PgPool, PooledClient, StatementRows } from './postgres-pool';

/** Where a statement failed: getting a pooled connection, or running on it. */
export type StatementStage = 'connect' | 'statement';

/**
 * Maps a database failure to the calling module's error. It receives the classification only
 * (codes, never the database's text), so the module's error cannot carry that text.
 */
export type StatementFailureMapper<E> = (failure: PostgresFailure, stage: StatementStage) => E;

/**
 * Runs one statement on a pooled connection and returns its rows. A failure, to get a connection
 * or in the statement, is thrown as `mapFailure` builds it from the classification. A connection
 * that failed mid-statement is destroyed rather than given back to the pool.
 *
 * @example
 * const rows = await runStatement(pool, 'SELECT 1', [], (failure) => new LedgerError('ledger_unavailable', failure.codes));
 */
export async function runStatement<E>(pool: PgPool, text: string, values: unknown[], mapFailure: StatementFailureMapper<E>): Promise<StatementRows> {
  const client = await connectGuarded(pool, mapFailure);
  try {
    const { rows } = await client.query(text, values);
    client.release();
    return rows;
  } catch (error) {
    const failure = classifyFailure(error);
    client.release(failure.connection ? true : undefined);
    throw mapFailure(failure, 'statement');
  }
}

/**
 * A pooled connection whose `'error'` events are heard (see {@link guardErrors}); failing to get one
 * is thrown as `mapFailure` builds it, with stage `connect`.
 */
export async function connectGuarded<E>(pool: PgPool, mapFailure: StatementFailureMapper<E>): Promise<PooledClient> {
  guardPoolErrors(pool);
  let client: PooledClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw mapFailure(classifyFailure(error), 'connect');
  }
  guardErrors(client);
  return client;
}

const guarded = new WeakSet<object>();

/**
 * The pool listens for errors of idle clients only. A connection the server terminates while it is
 * checked out emits 'error' (besides failing the statement), and an 'error' nobody hears crashes
 * the process. The statement's own failure is what gets reported.
 */
function guardErrors(client: PooledClient): void {
  if (guarded.has(client)) return;
  guarded.add(client);
  client.on('error', () => undefined);
}

/**
 * Guards every client the pool connects from then on, before anyone holds it: a server that
 * terminates a session right after its start-up can send the FATAL error in the same packet as
 * "ready", which the pool parses after handing the client out and before its holder can listen.
 */
export function guardPoolErrors(pool: PgPool): void {
  if (guarded.has(pool)) return;
  guarded.add(pool);
  pool.on('connect', (client) => guardErrors(client));
}

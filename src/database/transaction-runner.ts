import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { readOptions } from '../shared/options/option-reader';
import { integerIn } from '../shared/options/option-rules';
import { classifyFailure } from './postgres-failure';
import type { PgPool, StatementRows } from './postgres-pool';
import { connectGuarded, type StatementFailureMapper } from './statement-runner';

/** What the work of a transaction may do with its connection: run statements. */
export interface TransactionClient {
  query(text: string, values?: unknown[]): Promise<{ rows: StatementRows }>;
}

/** Options of {@link runTransaction} and {@link runTransactionOn}. */
export interface TransactionOptions {
  /**
   * `SET LOCAL statement_timeout` of the transaction, in milliseconds (a positive safe integer).
   * @default the session's setting
   */
  readonly statementTimeoutMs?: number;
}

/**
 * Runs `work` in one transaction on a pooled connection: `BEGIN` (with `SET LOCAL statement_timeout`
 * in the same round trip), `work(client)`, `COMMIT`; `ROLLBACK` when anything fails. An error of
 * this package thrown by `work` passes through unchanged after the rollback; any other failure is
 * thrown as `mapFailure` builds it from the classification (stage `connect` when no connection
 * could be had). A connection that failed, or whose rollback failed, is destroyed rather than given
 * back to the pool.
 *
 * @example
 * const count = await runTransaction(pool, async (client) => (await client.query('SELECT 1 AS n')).rows[0].n,
 *   (failure) => new EvalServiceError('eval_store_unavailable', failure.codes), { statementTimeoutMs: 10_000 });
 */
export async function runTransaction<T, E>(
  pool: PgPool,
  work: (client: TransactionClient) => Promise<T>,
  mapFailure: StatementFailureMapper<E>,
  options: TransactionOptions = {},
): Promise<T> {
  const begin = beginStatement(options);
  const client = await connectGuarded(pool, mapFailure);
  const outcome = await transact(client, begin, work);
  client.release(outcome.ok || outcome.usable ? undefined : true);
  if (outcome.ok) return outcome.value;
  throw passThroughOrMap(outcome.error, mapFailure);
}

/**
 * {@link runTransaction} on a connection the caller holds (a dedicated `pg.Client`): the same
 * statements and failure mapping, but the connection is neither released nor closed here.
 */
export async function runTransactionOn<T, E>(
  connection: TransactionClient,
  work: (client: TransactionClient) => Promise<T>,
  mapFailure: StatementFailureMapper<E>,
  options: TransactionOptions = {},
): Promise<T> {
  const outcome = await transact(connection, beginStatement(options), work);
  if (outcome.ok) return outcome.value;
  throw passThroughOrMap(outcome.error, mapFailure);
}

/** How a transaction ended; a failed one says whether its connection may serve again. */
type TransactionOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown; readonly usable: boolean };

const TRANSACTION_OPTION_RULES = { statementTimeoutMs: integerIn(1) };

function beginStatement(options: TransactionOptions): string {
  const read = readOptions(options, TRANSACTION_OPTION_RULES, { name: 'options', unknownKeys: 'ignore' });
  if (!read.ok) throw new TypeError(read.fields[0] === 'options' ? 'transaction options must be a plain object' : 'statementTimeoutMs must be a positive safe integer');
  const timeout = read.values.statementTimeoutMs as number | undefined;
  if (timeout === undefined) return 'BEGIN';
  // a simple-protocol query (no parameters) may carry several statements: one round trip
  return `BEGIN; SET LOCAL statement_timeout = ${timeout}`;
}

async function transact<T>(client: TransactionClient, begin: string, work: (client: TransactionClient) => Promise<T>): Promise<TransactionOutcome<T>> {
  try {
    await client.query(begin);
    const value = await work(client);
    await client.query('COMMIT');
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error, usable: await rolledBack(client, error) };
  }
}

/** Rolls back unless the connection itself failed; false when the connection cannot be trusted any more. */
async function rolledBack(client: TransactionClient, error: unknown): Promise<boolean> {
  if (!AgentRuntimeError.isAgentRuntimeError(error) && classifyFailure(error).connection) return false;
  try {
    await client.query('ROLLBACK');
    return true;
  } catch {
    return false;
  }
}

function passThroughOrMap<E>(error: unknown, mapFailure: StatementFailureMapper<E>): unknown {
  if (AgentRuntimeError.isAgentRuntimeError(error)) return error;
  return mapFailure(classifyFailure(error), 'statement');
}

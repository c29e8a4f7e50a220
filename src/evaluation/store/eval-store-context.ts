import type { DataSource } from 'typeorm';
import type { PostgresFailure } from '../../database/postgres-failure';
import { poolOf, type PgPool } from '../../database/postgres-pool';
import { runTransaction, type TransactionClient } from '../../database/transaction-runner';
import type { Clock } from '../../shared/time/clock';
import { EvalServiceError } from '../eval.errors';
import type { ResolvedEvalStoreOptions } from './eval-store-options';
import { evalStoreStatements, type EvalStoreStatements } from './eval-store-sql';

/** A database failure of the store: `eval_store_unavailable` with the SQLSTATE and socket code only. */
export function evalStoreFailure(failure: PostgresFailure): EvalServiceError {
  return new EvalServiceError('eval_store_unavailable', { ...failure.codes });
}

/** What the store's operations share: the settings, the clock, and one transaction per operation. */
export class EvalStoreContext {
  #statements: EvalStoreStatements | null = null;

  constructor(
    private readonly dataSource: DataSource,
    readonly settings: ResolvedEvalStoreOptions,
    readonly clock: Clock,
  ) {}

  /** The pool of the DataSource, once it is initialised; before that `eval_store_unavailable`. */
  pool(): PgPool {
    const pool = poolOf(this.dataSource);
    if (pool === null) throw new EvalServiceError('eval_store_unavailable', { sqlstate: null, socket_error: null });
    return pool;
  }

  /** Wall-clock epoch milliseconds for the records, whole (a `bigint` column holds no fraction). */
  now(): number {
    return Math.floor(this.clock.wallNow());
  }

  /** The DataSource the store was built on (for the schema validator). */
  get source(): DataSource {
    return this.dataSource;
  }

  /**
   * Runs `work` in one transaction on a pooled connection with `SET LOCAL statement_timeout`, with
   * the statements of the store's schema (the `schema` option, or `current_schema()` read on the
   * first transaction and kept). Errors of this package pass through; database failures become
   * `eval_store_unavailable`.
   */
  async run<T>(work: (client: TransactionClient, sql: EvalStoreStatements) => Promise<T>): Promise<T> {
    return runTransaction(this.pool(), async (client) => work(client, await this.statements(client)), evalStoreFailure, {
      statementTimeoutMs: this.settings.statementTimeoutMs,
    });
  }

  private async statements(client: TransactionClient): Promise<EvalStoreStatements> {
    if (this.#statements !== null) return this.#statements;
    let schema = this.settings.schema;
    if (schema === null) {
      const [row] = (await client.query('SELECT current_schema() AS schema')).rows;
      schema = (row?.schema as string | null | undefined) ?? null;
      if (schema === null) throw new EvalServiceError('eval_store_unavailable', { sqlstate: null, socket_error: null });
    }
    this.#statements = evalStoreStatements(schema, this.settings.tablePrefix);
    return this.#statements;
  }
}

import type { DataSource } from 'typeorm';
import type { PostgresFailure } from '../../database/postgres-failure';
import { poolOf, type PgPool } from '../../database/postgres-pool';
import { runTransaction, type TransactionClient } from '../../database/transaction-runner';
import type { Clock } from '../../shared/time/clock';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { emitSafely, type TelemetrySink } from '../../telemetry/telemetry-sink';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { OutboxJobPhase } from './outbox.schema';
import type { ResolvedMemoryOutboxOptions } from './outbox-options';
import { outboxStatements, type OutboxStatements } from './outbox-sql';
import type { OutboxJobTelemetry } from './outbox.types';

/** `statement_timeout` of the outbox's transactions (health uses its own 1000 ms). */
export const OUTBOX_STATEMENT_TIMEOUT_MS = 10_000;

/** A database failure of the outbox: `runtime_service_store_unavailable` with the SQLSTATE only. */
export function outboxStoreFailure(failure: PostgresFailure): RuntimeServiceError {
  return new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: failure.codes.sqlstate });
}

/** What the outbox's operations share: options, clock, random source, telemetry and one transaction per operation. */
export class OutboxContext {
  #statements: OutboxStatements | null = null;

  constructor(
    private readonly dataSource: DataSource,
    readonly options: ResolvedMemoryOutboxOptions,
    readonly clock: Clock,
    /** Uniform in [0, 1): the retry jitter. */
    readonly random: () => number,
    private readonly events: TelemetrySink | undefined,
  ) {}

  /** The pool of the DataSource while it is initialised; else `runtime_service_store_unavailable`. */
  pool(): PgPool {
    const pool = poolOf(this.dataSource);
    if (pool === null) throw new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: null });
    return pool;
  }

  /**
   * Runs `work` in one transaction with the outbox's statements (tables qualified with the schema
   * `current_schema()` names on the first transaction). Errors of this package pass through;
   * database failures become `runtime_service_store_unavailable`.
   */
  async run<T>(work: (client: TransactionClient, sql: OutboxStatements) => Promise<T>, statementTimeoutMs = OUTBOX_STATEMENT_TIMEOUT_MS): Promise<T> {
    return runTransaction(this.pool(), async (client) => work(client, await this.statements(client)), outboxStoreFailure, { statementTimeoutMs });
  }

  /** The statements, resolving the schema on `client` (a transaction of the caller's) the first time. */
  async statements(client: TransactionClient): Promise<OutboxStatements> {
    if (this.#statements !== null) return this.#statements;
    const [row] = (await client.query('SELECT current_schema() AS schema')).rows;
    const schema = row?.schema;
    if (typeof schema !== 'string') throw new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: null });
    this.#statements = outboxStatements(schema);
    return this.#statements;
  }

  /** Emits `agent_runtime.memory_outbox.job`; a throwing listener is ignored. */
  transition(from: OutboxJobPhase | null, to: OutboxJobPhase, attempts: number, reason: string | null = null): void {
    if (this.events === undefined) return;
    const payload: OutboxJobTelemetry = Object.freeze({ from, to, attempts, reason });
    emitSafely(this.events, TelemetryEvents.memoryOutboxJob, payload);
  }
}

/** A `bigint` or `integer` column as a number (node-postgres returns `bigint` as text). */
export function rowNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

import type { DataSource } from 'typeorm';
import type { PostgresFailure } from '../../database/postgres-failure';
import { poolOf } from '../../database/postgres-pool';
import { isPostgresIdentifier } from '../../database/schema/table-spec';
import { runTransaction, type TransactionClient } from '../../database/transaction-runner';
import { postgresStoreFailure } from '../postgres-store-failure';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkMemoryScope } from '../service-scope';
import type { AdapterCallOptions, ComponentCapabilities, IngestionCount, MemoryHit, MemoryScope } from '../services.types';
import { resolveMemoryAdapterConfig, type MemoryAdapterConfig } from './memory-adapter-config';
import type { MemoryAdapter } from './memory-adapter.types';
import { memoryEntriesOf, type MemoryEntryBatch } from './memory-entries';
import { assertCallLive, checkCallOptions, checkIngestion, checkSearch, checkSessionInput } from './memory-requests';
import { memoryStatements, type MemoryStatements } from './postgres-memory-sql';

/** What the Postgres memory adapter reports of itself (spec 07 §1.5). */
export const POSTGRES_MEMORY_CAPABILITIES: ComponentCapabilities = Object.freeze({
  api_version: 1,
  contract_version: 2,
  immutable_versions: false,
  persistence: 'postgres',
  durable: true,
  search: 'postgres_full_text',
  idempotent_ingestion: true,
  incremental_events: true,
  erasure_epoch_fencing: true,
  quota_scope: 'exact_scope_shard',
  idle_reclamation: 'lru_on_capacity',
});

/**
 * Runs inside the erasure's transaction, after the epoch was raised (its row locked) and the entries
 * deleted: the memory outbox cancels the scope's jobs of older epochs here. A failure rolls the
 * whole erasure back.
 */
export type MemoryEraseHook = (client: TransactionClient, scope: MemoryScope, epoch: number) => Promise<void>;

/** What a {@link PostgresMemoryAdapter} takes besides its DataSource and `adapterConfig`. */
export interface PostgresMemoryAdapterDeps {
  /** Postgres schema of both tables (`^[a-z_][a-z0-9_]{0,62}$`). @default the connection's current_schema(), read once */
  readonly schema?: string;
  /** Called inside every erasure's transaction. @default none */
  readonly onErase?: MemoryEraseHook;
}

/**
 * The memory adapter of the durable profile on `agent_runtime_memory_entries` and
 * `agent_runtime_memory_erasure_epochs` (migration `RuntimeMemory1764900000001`; the bundle validates
 * them with `MEMORY_TABLE_SPECS`). Every operation is one transaction whose statements are
 * bounded by the call's `timeoutMs` (`SET LOCAL statement_timeout`). An insert share-locks the
 * scope's epoch row (creating it at 0 first when absent, so there is a row to lock) and checks the
 * epoch in the same transaction, so an ingestion of an older epoch that arrives after an erasure is
 * refused (`memory_epoch_fenced`) rather than bringing erased data back; an erasure that started
 * first is waited for. Search is Postgres full-text search (`simple`). A database failure carries
 * the SQLSTATE only: `runtime_service_store_unavailable` for an outage, `memory_shard_adapter_failed`
 * for anything else the database refuses ({@link postgresStoreFailure}).
 *
 * @example
 * const memory = new PostgresMemoryAdapter(dataSource, {}, { onErase: outbox.cancelOlderEpochs });
 * const { epoch } = await memory.eraseMemory({ appName: 'app', userId: 'u1' });
 */
export class PostgresMemoryAdapter implements MemoryAdapter {
  readonly id = 'postgres_memory';
  readonly capabilities = POSTGRES_MEMORY_CAPABILITIES;
  /** The `adapterConfig` with its defaults. */
  readonly config: MemoryAdapterConfig;
  readonly #dataSource: DataSource;
  readonly #schema: string | null;
  readonly #onErase: MemoryEraseHook | null;
  #statements: MemoryStatements | null = null;
  #closed = false;
  readonly #inFlight = new Set<Promise<unknown>>();

  /**
   * Throws `invalid_runtime_service_component_config` for a bad `adapterConfig`, a `TypeError` for a
   * malformed `schema` or `onErase`. The DataSource may be initialised later.
   */
  constructor(dataSource: DataSource, adapterConfig?: unknown, deps: PostgresMemoryAdapterDeps = {}) {
    this.config = resolveMemoryAdapterConfig('postgres', adapterConfig);
    if (deps.schema !== undefined && !isPostgresIdentifier(deps.schema)) throw new TypeError('schema must match ^[a-z_][a-z0-9_]{0,62}$');
    if (deps.onErase !== undefined && typeof deps.onErase !== 'function') throw new TypeError('onErase must be a function');
    this.#dataSource = dataSource;
    this.#schema = deps.schema ?? null;
    this.#onErase = deps.onErase ?? null;
  }

  /** Every `user_message` / `final_output` event with text of the session becomes an entry, at the scope's current epoch. */
  addSessionToMemory(input: Parameters<MemoryAdapter['addSessionToMemory']>[0], options?: AdapterCallOptions): Promise<IngestionCount> {
    return this.#run(options, () => {
      const checked = checkSessionInput(input);
      return { scope: checked.scope, batch: memoryEntriesOf(checked.scope, checked.events, this.config, checked.sessionId) };
    }, async (client, sql, { scope, batch }) => this.#insert(client, sql, scope, batch, await this.#lockEpoch(client, sql, scope), options));
  }

  /** Incremental, idempotent by `event_id`; `ingestion.epoch` below the scope's erasure epoch (read under a share lock) → `memory_epoch_fenced`. */
  addEvents(scope: MemoryScope, events: Parameters<MemoryAdapter['addEvents']>[1], ingestion: Parameters<MemoryAdapter['addEvents']>[2], options?: AdapterCallOptions): Promise<IngestionCount> {
    return this.#run(options, () => {
      const checked = checkMemoryScope(scope);
      const { epoch } = checkIngestion(ingestion);
      return { scope: checked, epoch, batch: memoryEntriesOf(checked, events, this.config) };
    }, async (client, sql, request) => {
      const current = await this.#lockEpoch(client, sql, request.scope);
      if (request.epoch < current) throw new RuntimeServiceError('memory_epoch_fenced', { epoch: request.epoch, current_epoch: current });
      return this.#insert(client, sql, request.scope, request.batch, current, options);
    });
  }

  /** Full-text search of the scope: `websearch_to_tsquery('simple', query)` ranked by `ts_rank_cd`, ties newest first, then by id; bounded after ranking. */
  searchMemory(request: Parameters<MemoryAdapter['searchMemory']>[0], options?: AdapterCallOptions): Promise<{ readonly memories: readonly MemoryHit[] }> {
    return this.#run(options, () => checkSearch(request, this.config), async (client, sql, search) => {
      const values = [search.scope.appName, search.scope.userId, search.query, search.limit, this.config.maxResultBytes];
      const { rows } = await client.query(sql.search, values);
      const memories = rows.map((row) =>
        Object.freeze({ id: row.entry_id as string, content: row.content as string, author: row.author as string, timestamp_ms: Number(row.timestamp_ms), score: Number(row.score) }),
      );
      return Object.freeze({ memories: Object.freeze(memories) });
    });
  }

  /** One transaction: the scope's epoch + 1 (row locked), its entries deleted, the `onErase` hook; returns the new epoch. */
  eraseMemory(scope: MemoryScope, options?: AdapterCallOptions): Promise<{ readonly epoch: number }> {
    return this.#run(options, () => checkMemoryScope(scope), async (client, sql, checked) => {
      const [row] = (await client.query(sql.raiseEpoch, [checked.appName, checked.userId])).rows;
      const epoch = Number(row?.epoch);
      await client.query(sql.deleteEntries, [checked.appName, checked.userId]);
      if (this.#onErase !== null) await this.#onErase(client, checked, epoch);
      assertCallLive(options);
      return Object.freeze({ epoch });
    });
  }

  /** Refuses new operations (`runtime_service_generation_stale`) and waits for those in flight. The DataSource stays open. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Checks the request, then runs `work` in one transaction on the pool; tracked so that `close` can wait for it. */
  #run<R, T>(options: AdapterCallOptions | undefined, check: () => R, work: (client: TransactionClient, sql: MemoryStatements, request: R) => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      if (this.#closed) throw new RuntimeServiceError('runtime_service_generation_stale');
      const call = checkCallOptions(options);
      assertCallLive(call);
      const request = check();
      const pool = poolOf(this.#dataSource);
      if (pool === null) throw storeUnavailable(null);
      const statementTimeoutMs = statementTimeoutOf(call);
      running = runTransaction(
        pool,
        async (client) => {
          assertCallLive(call);
          return work(client, await this.#statementsOn(client), request);
        },
        (failure: PostgresFailure) => postgresStoreFailure('memory', failure),
        statementTimeoutMs === undefined ? {} : { statementTimeoutMs },
      );
    } catch (error) {
      return Promise.reject(error);
    }
    const tracked = running.catch(() => undefined);
    this.#inFlight.add(tracked);
    void tracked.then(() => this.#inFlight.delete(tracked));
    return running;
  }

  /** The scope's epoch with its row share-locked; a scope without a row gets one at 0 first, so that an erasure cannot slip past. */
  async #lockEpoch(client: TransactionClient, sql: MemoryStatements, scope: MemoryScope): Promise<number> {
    const values = [scope.appName, scope.userId];
    let [row] = (await client.query(sql.lockEpoch, values)).rows;
    if (row === undefined) {
      // waits for an erasure that is inserting the row, then a new statement sees what it committed
      await client.query(sql.seedEpoch, values);
      [row] = (await client.query(sql.lockEpoch, values)).rows;
    }
    if (row === undefined) throw storeUnavailable(null);
    return Number(row.epoch);
  }

  async #insert(client: TransactionClient, sql: MemoryStatements, scope: MemoryScope, batch: MemoryEntryBatch, epoch: number, options: AdapterCallOptions | undefined): Promise<IngestionCount> {
    const entries = batch.entries;
    let added = 0;
    if (entries.length > 0) {
      assertCallLive(options);
      const { rows } = await client.query(sql.insertEntries, [
        scope.appName,
        scope.userId,
        epoch,
        entries.map((entry) => entry.entryId),
        entries.map((entry) => entry.eventId),
        entries.map((entry) => entry.author),
        entries.map((entry) => entry.content),
        entries.map((entry) => entry.metadataJson),
        entries.map((entry) => entry.timestampMs),
      ]);
      added = rows.length;
    }
    return Object.freeze({ added, duplicates: entries.length - added + batch.repeated });
  }

  /** The statements on the configured schema, or on the `current_schema()` read on the first transaction and kept. */
  async #statementsOn(client: TransactionClient): Promise<MemoryStatements> {
    if (this.#statements !== null) return this.#statements;
    let schema = this.#schema;
    if (schema === null) {
      const [row] = (await client.query('SELECT current_schema() AS schema')).rows;
      schema = (row?.schema as string | null | undefined) ?? null;
      if (schema === null) throw storeUnavailable(null);
    }
    this.#statements = memoryStatements(schema);
    return this.#statements;
  }
}

/** The largest `statement_timeout` Postgres accepts (an `int` of milliseconds). */
const MAX_STATEMENT_TIMEOUT_MS = 2 ** 31 - 1;

function storeUnavailable(sqlstate: string | null): RuntimeServiceError {
  return new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate });
}

/** The call's time left as a statement timeout: whole milliseconds, at least 1, at most what Postgres accepts. */
function statementTimeoutOf(options: AdapterCallOptions | undefined): number | undefined {
  const timeoutMs = options?.timeoutMs;
  if (timeoutMs === undefined || !Number.isFinite(timeoutMs)) return undefined;
  return Math.min(Math.max(1, Math.ceil(timeoutMs)), MAX_STATEMENT_TIMEOUT_MS);
}

import { advisoryLockKey } from '../../../../database/instance-lock';
import { NotificationListener } from '../../../../database/notification-listener';
import { classifyFailure } from '../../../../database/postgres-failure';
import type { PgPool } from '../../../../database/postgres-pool';
import { qualifiedTable } from '../../../../database/qualified-table';
import type { SchemaCheckTarget } from '../../../../database/schema/startup-schema-check';
import { runStatement } from '../../../../database/statement-runner';
import { runTransaction, type TransactionClient } from '../../../../database/transaction-runner';
import type { RunStatus } from '../../run-registry.types';
import {
  isFinishedStatus,
  type AppendOptions,
  type AppendOutcome,
  type NewRunStreamItem,
  type RunItemsPage,
  type RunPatch,
  type RunStore,
  type StoredRun,
  type WriteCondition,
  type WriteOutcome,
} from '../run-store';
import { unavailable } from '../../../../cluster/cluster-instance';
import { ClusterError } from '../../../../cluster/cluster.errors';
import { RUN_ITEMS_TABLE, RUNS_TABLE } from './cluster-runs.schema';
import { assertRunTables, runTablesTarget } from './run-tables-check';
import { resolvePostgresRunStoreOptions, type PostgresRunStoreOptions, type ResolvedPostgresRunStoreOptions } from './postgres-run-store-options';
import { encodeJson } from './run-json';
import { isWritable, itemOf, lockRun, merged, ownerAfterPatch, payloadOf, runRowOf, updateValues, type RunRow } from './run-rows';
import { RUNS_CHANNEL, runStatements, type RunStatements } from './run-sql';
import { RunUpkeep } from './run-upkeep';
import { RunWatchers } from './run-watchers';
import { SharedRunReads } from './shared-run-reads';

/** Highest `seq` an `integer` column holds; a larger `afterSeq` reads nothing. */
const MAX_SEQ = 2 ** 31 - 1;

type StoreState = 'new' | 'started' | 'stopped';

/**
 * The cluster's {@link RunStore} (spec 08 §4) on `agent_runtime_runs` and `agent_runtime_run_items`:
 * every instance of an app reads, follows, cancels and confirms any run. An item, its patch and
 * `last_item_seq` are written in one transaction under the run's row lock (compare-and-set on the
 * expected statuses), which also sends `NOTIFY agent_runtime_runs, '<run_id>:<seq>'`; watchers are
 * woken by that notification (one LISTEN connection per store), by this process's own writes, after
 * the listener reconnects, and by a poll of the watched runs every `pollIntervalMs`, so a lost
 * notification only delays. The same tick takes over the executing runs of dead instances (for the
 * registry's adopter) and prunes finished runs older than `finishedRunTtlMs` in bounded batches.
 * Database failures are `ClusterError('cluster_unavailable')` with SQLSTATE/socket codes only.
 *
 * @example
 * const store = new PostgresRunStore({ instance });
 * await store.start();
 * const registry = new RunRegistry({ runners: [runner], store });
 */
export class PostgresRunStore implements RunStore {
  /** Runs live in the database: paused ones are confirmed after a restart. */
  readonly survivesRestart = true;
  private readonly settings: ResolvedPostgresRunStoreOptions;
  private readonly pool: PgPool;
  private readonly watchers = new RunWatchers((runId) => this.reads.forget(runId));
  private readonly reads = new SharedRunReads(
    (runId, afterSeq) => this.readItems(runId, afterSeq),
    (runId) => this.watchers.lastSeqOf(runId),
  );
  private readonly upkeep: RunUpkeep;
  private state: StoreState = 'new';
  private sql: RunStatements | null = null;
  private capacityKey = '';
  private listener: NotificationListener | null = null;
  private timer: unknown = null;
  private ticking: Promise<void> = Promise.resolve();

  /** Validates synchronously: `invalid_cluster_options` (`{field}`). */
  constructor(options: PostgresRunStoreOptions) {
    this.settings = resolvePostgresRunStoreOptions(options);
    this.pool = this.settings.instance.pool;
    this.upkeep = new RunUpkeep({ settings: this.settings, watchers: this.watchers, statements: () => this.statements(), statement: (text, values) => this.statement(text, values) });
  }

  /** This store's instance id: the owner it records. */
  get instanceId(): string {
    return this.settings.instance.instanceId;
  }

  /** True while started and the LISTEN connection is up (readiness). */
  get connected(): boolean {
    return this.state === 'started' && this.listener !== null && this.listener.connected;
  }

  /** Both tables as the app-wide start-up check validates them. */
  get schemaTarget(): SchemaCheckTarget {
    return runTablesTarget(this.settings.instance.dataSource, this.settings.schema);
  }

  /**
   * Validates both tables (`schema_mismatch` with `{mismatches}`), starts LISTEN on
   * `agent_runtime_runs` and the periodic tick. `cluster_unavailable` when the database cannot be
   * reached. Idempotent while started.
   */
  async start(): Promise<void> {
    if (this.state === 'started') return;
    if (this.state === 'stopped') throw new ClusterError('cluster_unavailable', { reason: 'stopped' });
    const { schema } = this.settings;
    await assertRunTables(this.schemaTarget);
    // qualified, so a later change of search_path cannot redirect the statements
    const [row] = await runStatement(this.pool, 'SELECT current_schema() AS schema', [], unavailable);
    const resolved = schema ?? (row?.schema as string | null | undefined) ?? null;
    const runs = qualifiedTable(resolved, RUNS_TABLE);
    this.sql = runStatements(runs, qualifiedTable(resolved, RUN_ITEMS_TABLE));
    this.capacityKey = advisoryLockKey('agent_runtime.runs.capacity', runs);
    const listener = new NotificationListener(
      this.pool,
      { channels: [RUNS_CHANNEL] },
      { notified: (_channel, payload) => this.watchers.notified(payload), reconnected: () => this.watchers.wakeAll() },
    );
    try {
      await listener.start();
    } catch (error) {
      await listener.close();
      throw unavailable(classifyFailure(error));
    }
    this.listener = listener;
    this.state = 'started';
    this.schedule();
  }

  /** Stops the tick and the LISTEN connection; later operations fail with `cluster_unavailable` (`reason: 'stopped'`). Idempotent. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    if (this.timer !== null) this.settings.clock.clearTimer(this.timer);
    this.timer = null;
    await this.ticking;
    await this.listener?.close();
    this.listener = null;
  }

  /** Stores the run owned by this instance unless `maxRuns` runs are retained cluster-wide and none of them is finished. */
  async create(run: StoredRun, limits: { readonly maxRuns: number }): Promise<boolean> {
    const sql = this.statements();
    return this.transaction(async (client) => {
      // one creation at a time across the cluster: the count and the insert must agree
      await client.query(sql.lockCapacity, [this.capacityKey]);
      const counts = (await client.query(sql.count)).rows[0];
      if (Number(counts.active) >= limits.maxRuns) return false;
      const excess = Number(counts.total) - limits.maxRuns + 1;
      if (excess > 0) await client.query(sql.evictFinished, [excess]);
      await client.query(sql.insert, [
        run.run_id,
        run.agent,
        run.user_id,
        run.session_id,
        run.invocation_id,
        run.status,
        encodeJson(run.pending_call_ids),
        run.error === null ? null : encodeJson(run.error),
        run.durable,
        run.created_at_ms,
        run.updated_at_ms,
        this.instanceId,
        run.owner_principal,
      ]);
      return true;
    });
  }

  async get(runId: string): Promise<StoredRun | undefined> {
    const [row] = await this.statement(this.statements().get, [runId]);
    return row ? runRowOf(row).run : undefined;
  }

  /** Changes status fields; a patch to `pending` or `running` makes this instance the owner. */
  async update(runId: string, patch: RunPatch, condition: WriteCondition = {}): Promise<WriteOutcome> {
    const sql = this.statements();
    return this.transaction(async (client) => {
      const locked = await lockRun(client, sql, runId);
      if (!locked || !isWritable(locked, condition, this.instanceId)) return { written: false, run: locked?.run };
      const next = merged(locked.run, patch, locked.run.last_seq);
      await client.query(sql.update, updateValues(next, ownerAfterPatch(locked, patch, this.instanceId), locked.oldest_item_seq, encodeJson));
      return { written: true, run: next };
    });
  }

  /** Numbers and stores the item with its patch, evicts items beyond `keepItems` and notifies, in one transaction; then wakes local watchers. */
  async append(runId: string, item: NewRunStreamItem, options: AppendOptions): Promise<AppendOutcome> {
    const sql = this.statements();
    const payload = payloadOf(item);
    const outcome = await this.transaction(async (client): Promise<AppendOutcome> => {
      const locked = await lockRun(client, sql, runId);
      if (!locked || !isWritable(locked, options, this.instanceId)) return { written: false, run: locked?.run };
      const seq = locked.run.last_seq + 1;
      const next = merged(locked.run, options.patch, seq);
      const oldest = Math.max(locked.oldest_item_seq, seq - options.keepItems + 1);
      const values = updateValues(next, ownerAfterPatch(locked, options.patch, this.instanceId), oldest, encodeJson);
      await client.query(sql.append, [...values, item.type, payload, locked.oldest_item_seq, `${runId}:${seq}`]);
      return { written: true, run: next, item: itemOf(seq, payload) };
    });
    if (outcome.written) this.watchers.wake(runId, outcome.item.seq);
    return outcome;
  }

  itemsAfter(runId: string, afterSeq: number): Promise<RunItemsPage | undefined> {
    return this.reads.itemsAfter(runId, afterSeq);
  }

  private async readItems(runId: string, afterSeq: number): Promise<RunItemsPage | undefined> {
    const rows = await this.statement(this.statements().itemsAfter, [runId, Math.min(afterSeq, MAX_SEQ)]);
    if (rows.length === 0) return undefined;
    const first = rows[0];
    const lastSeq = Number(first.last_item_seq);
    const items = rows.filter((row) => row.seq !== null).map((row) => itemOf(Number(row.seq), row.payload_json as string));
    return Object.freeze({
      items: Object.freeze(items),
      oldest_seq: Number(first.oldest_item_seq),
      last_seq: lastSeq,
      finished: isFinishedStatus(first.status as RunStatus),
    });
  }

  /** Wakes `wake` after each item of the run stored by any instance, and when the run is removed. */
  watch(runId: string, wake: () => void): () => void {
    return this.watchers.watch(runId, wake);
  }

  async delete(runId: string): Promise<boolean> {
    const removed = (await this.statement(this.statements().delete, [runId])).length > 0;
    if (removed) this.watchers.wake(runId);
    return removed;
  }

  async countActive(): Promise<number> {
    const [row] = await this.statement(this.statements().countActive, []);
    return Number(row.n);
  }

  /**
   * Registers the registry's adopter of orphans: each tick takes over (at most `claimBatchSize`)
   * pending or running runs whose owner instance is dead, and hands each to `adopt`. Only one adopter;
   * returns its removal.
   */
  adoptOrphans(adopt: (run: StoredRun) => void): () => void {
    return this.upkeep.adoptOrphans(adopt);
  }

  /**
   * Takes over up to `limit` pending or running runs whose owner instance is dead (its lock is free),
   * atomically: of several instances trying, exactly one gets each run. Paused runs hold no process
   * and are left alone. Nothing is taken while this instance is not live itself. Until a claim finds
   * fewer than `limit`, the unfinished runs under this instance's own id created before this store was
   * built are taken too: they were left by an earlier life of the same id (a restart with a fixed
   * `instanceId`), which nobody else can reap; a run this life stores meanwhile is not one of them.
   */
  claimOrphans(limit: number = this.settings.claimBatchSize): Promise<readonly StoredRun[]> {
    return this.upkeep.claimOrphans(limit);
  }

  /**
   * Registers the registry's reconciler: each tick (while this instance is live) finds up to
   * `claimBatchSize` pending or running runs owned by this instance that `executing()` does not list,
   * and hands to `abandoned` those found in two ticks in a row: their invocation is gone from this
   * process without its end written (spec'd in docs/runner.md). Only one reconciler; returns its removal.
   */
  reconcileOwned(executing: () => readonly string[], abandoned: (run: StoredRun) => void): () => void {
    return this.upkeep.reconcileOwned(executing, abandoned);
  }

  /** One reconciliation round (see `reconcileOwned`); the tick runs it. */
  reconcile(): Promise<void> {
    return this.upkeep.reconcile();
  }

  /** Removes finished runs (and their items) older than `finishedRunTtlMs`, `pruneBatchSize` per statement, up to 10 statements; the count removed. */
  pruneFinished(): Promise<number> {
    return this.upkeep.pruneFinished();
  }

  private schedule(): void {
    if (this.state !== 'started') return;
    this.timer = this.settings.clock.setTimer(() => {
      this.ticking = this.upkeep.tick(() => this.state === 'started').finally(() => this.schedule());
    }, this.settings.pollIntervalMs);
  }

  private statements(): RunStatements {
    if (this.state !== 'started' || this.sql === null) throw new ClusterError('cluster_unavailable', { reason: this.state === 'stopped' ? 'stopped' : 'not_started' });
    return this.sql;
  }

  private statement(text: string, values: unknown[]) {
    return runStatement(this.pool, text, values, unavailable);
  }

  private transaction<T>(work: (client: TransactionClient) => Promise<T>): Promise<T> {
    return runTransaction(this.pool, work, unavailable);
  }
}

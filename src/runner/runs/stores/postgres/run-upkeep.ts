import type { StatementRows } from '../../../../database/postgres-pool';
import type { StoredRun } from '../run-store';
import type { ResolvedPostgresRunStoreOptions } from './postgres-run-store-options';
import { runRowOf } from './run-rows';
import type { RunStatements } from './run-sql';
import type { RunWatchers } from './run-watchers';

/** Prune statements per tick at most, so one tick stays bounded. */
const PRUNE_STATEMENTS_PER_TICK = 10;
/** Run ids per poll statement. */
const POLL_CHUNK = 1000;

/** What the upkeep uses of its store. */
export interface UpkeepDeps {
  readonly settings: ResolvedPostgresRunStoreOptions;
  readonly watchers: RunWatchers;
  /** The store's statements (throws `cluster_unavailable` unless the store is started). */
  statements(): RunStatements;
  statement(text: string, values: unknown[]): Promise<StatementRows>;
}

/** The registry's side of the reconciliation: what executes here, and who ends what does not. */
interface Reconciler {
  readonly executing: () => readonly string[];
  readonly abandoned: (run: StoredRun) => void;
}

/**
 * The periodic fallbacks of a `PostgresRunStore` (spec 08 §4), one round per tick: a poll of the
 * watched runs (so a lost notification only delays), the takeover of the executing runs of dead
 * instances (for the registry's adopter), the reconciliation of this instance's own runs whose
 * invocation is gone (for the registry's reconciler), and the prune of old finished runs in bounded
 * batches. Each part's failure waits for the next tick.
 */
export class RunUpkeep {
  /** Runs under this instance's own id may be left from an earlier life; true until a claim finds no more. */
  private ownLeftovers = true;
  /** Only a run created before this life began can be a leftover of an earlier one: a run this life stores meanwhile is not. */
  private readonly lifeBeganAtMs: number;
  private adopter: ((run: StoredRun) => void) | undefined;
  private reconciler: Reconciler | undefined;
  /** Runs the last reconciliation found not executing; found again, they are abandoned. */
  private suspects: ReadonlySet<string> = new Set();

  constructor(private readonly deps: UpkeepDeps) {
    this.lifeBeganAtMs = deps.settings.clock.wallNow();
  }

  /** Registers the one adopter of orphans; returns its removal. */
  adoptOrphans(adopt: (run: StoredRun) => void): () => void {
    this.adopter = adopt;
    return () => {
      if (this.adopter === adopt) this.adopter = undefined;
    };
  }

  /** Registers the one reconciler of this instance's abandoned runs; returns its removal. */
  reconcileOwned(executing: () => readonly string[], abandoned: (run: StoredRun) => void): () => void {
    const reconciler: Reconciler = { executing, abandoned };
    this.reconciler = reconciler;
    return () => {
      if (this.reconciler === reconciler) this.reconciler = undefined;
    };
  }

  /** One round; `stillStarted` is asked between the parts, so a stopping store does no more. */
  async tick(stillStarted: () => boolean): Promise<void> {
    await this.pollWatched().catch(() => undefined);
    if (!stillStarted()) return;
    const adopt = this.adopter;
    if (adopt) {
      const orphans = await this.claimOrphans(this.deps.settings.claimBatchSize).catch(() => [] as readonly StoredRun[]);
      for (const run of orphans) {
        try {
          adopt(run);
        } catch {
          // an adopter's failure leaves the run owned here; it is taken over again when this instance dies
        }
      }
    }
    if (!stillStarted()) return;
    await this.reconcile().catch(() => undefined);
    await this.pruneFinished().catch(() => undefined);
  }

  /**
   * Hands the reconciler this live instance's pending or running runs that do not execute here and
   * did not in the previous round either: two rounds, because a run is stored a moment before its
   * invocation is launched. After an outage the first two successful rounds end them.
   */
  async reconcile(): Promise<void> {
    const reconciler = this.reconciler;
    const { instance, claimBatchSize } = this.deps.settings;
    if (!reconciler || !instance.live) {
      this.suspects = new Set();
      return;
    }
    const rows = await this.deps.statement(this.deps.statements().ownedIdle, [instance.instanceId, [...reconciler.executing()], claimBatchSize]);
    const runs = rows.map((row) => runRowOf(row).run);
    const previous = this.suspects;
    this.suspects = new Set(runs.map((run) => run.run_id));
    for (const run of runs) {
      if (!previous.has(run.run_id)) continue;
      try {
        reconciler.abandoned(run);
      } catch {
        // found again next round
      }
    }
  }

  /** See `PostgresRunStore.claimOrphans`. */
  async claimOrphans(limit: number): Promise<readonly StoredRun[]> {
    const { instance } = this.deps.settings;
    if (!instance.live) return [];
    const includeOwn = this.ownLeftovers;
    const rows = await this.deps.statement(this.deps.statements().claimOrphans, [instance.instanceId, limit, includeOwn ? this.lifeBeganAtMs : null]);
    if (includeOwn && rows.length < limit) this.ownLeftovers = false;
    return Object.freeze(rows.map((row) => runRowOf(row).run));
  }

  /** See `PostgresRunStore.pruneFinished`. */
  async pruneFinished(): Promise<number> {
    const { clock, finishedRunTtlMs, pruneBatchSize } = this.deps.settings;
    const before = clock.wallNow() - finishedRunTtlMs;
    let total = 0;
    for (let statement = 0; statement < PRUNE_STATEMENTS_PER_TICK; statement++) {
      const removed = await this.deps.statement(this.deps.statements().pruneFinished, [before, pruneBatchSize]);
      total += removed.length;
      for (const row of removed) this.deps.watchers.wake(row.run_id as string);
      if (removed.length < pruneBatchSize) break;
    }
    return total;
  }

  private async pollWatched(): Promise<void> {
    const runIds = this.deps.watchers.runIds();
    for (let from = 0; from < runIds.length; from += POLL_CHUNK) {
      const chunk = runIds.slice(from, from + POLL_CHUNK);
      const rows = await this.deps.statement(this.deps.statements().lastSeqs, [chunk]);
      const seqs = new Map(rows.map((row) => [row.run_id as string, Number(row.last_item_seq)]));
      for (const runId of chunk) this.deps.watchers.polled(runId, seqs.get(runId) ?? -1);
    }
  }
}

import type { OwnedRun } from '../run-access';
import type { RunStatus, RunStatusRecord, RunStreamItem } from '../run-registry.types';

/** A run as the store keeps it: the status record plus what a resume or cancel needs. */
export interface StoredRun extends RunStatusRecord {
  readonly user_id: string;
  /** The id of the principal that started the run; `null` for a run started without one. */
  readonly owner_principal: string | null;
  readonly durable: boolean;
}

/** Fields a write may change; `updated_at_ms` is always given by the writer. */
export type RunPatch = Partial<Pick<StoredRun, 'status' | 'invocation_id' | 'pending_call_ids' | 'error'>> & { readonly updated_at_ms: number };

type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;

/** A stream item before the store numbers it. */
export type NewRunStreamItem = WithoutSeq<RunStreamItem>;

/** Conditions of a write. */
export interface WriteCondition {
  /** Write only while the run has one of these statuses (compare-and-set). @default any unfinished status */
  readonly expect?: readonly RunStatus[];
  /**
   * Write only while this store's instance owns the run (a store shared by instances records the
   * owner; one without owners ignores this). The registry's writes for an invocation it executes set
   * it, so an instance that lost a run to a takeover cannot write to it any more. @default false
   */
  readonly owned?: boolean;
}

/** Options of `append`. */
export interface AppendOptions extends WriteCondition {
  /** Applied in the same atomic step as the item (and `last_seq`). */
  readonly patch?: RunPatch;
  /** Keep at most this many items of the run for replay; older ones are evicted. */
  readonly keepItems: number;
}

/** Nothing was written (the run is unknown, finished, or not in an expected status): the run as it is. */
export interface Refused {
  readonly written: false;
  /** `undefined` for an unknown run. */
  readonly run: StoredRun | undefined;
}

/** The outcome of a conditional `update`: the run after it, or the refusal. */
export type WriteOutcome = { readonly written: true; readonly run: StoredRun } | Refused;

/** The outcome of a conditional `append`: the numbered item and the run after it, or the refusal. */
export type AppendOutcome = { readonly written: true; readonly run: StoredRun; readonly item: RunStreamItem } | Refused;

/** The buffered items of a run after a `seq`. */
export interface RunItemsPage {
  /** In `seq` order. */
  readonly items: readonly RunStreamItem[];
  /** `seq` of the oldest item still buffered (`last_seq + 1` when none is). */
  readonly oldest_seq: number;
  readonly last_seq: number;
  /** The terminal item has been written. */
  readonly finished: boolean;
}

/**
 * Where the registry keeps runs and their stream items (spec 03 §9, 08 §4). Every operation may be
 * asynchronous, so a Postgres store (rows plus LISTEN/NOTIFY) fits the same shape. Invariants every
 * store keeps: items of a run are numbered 1..n without gaps; an item and its patch are written in
 * one atomic step before watchers hear of it; nothing is written to a run after its terminal item
 * (a finished run never changes).
 */
export interface RunStore {
  /**
   * Stores a new run unless `maxRuns` runs are retained; the oldest finished runs are removed to
   * make room, and `false` means every retained run is unfinished.
   */
  create(run: StoredRun, limits: { readonly maxRuns: number }): Promise<boolean>;
  get(runId: string): Promise<StoredRun | undefined>;
  /** Changes status fields of an unfinished run. */
  update(runId: string, patch: RunPatch, condition?: WriteCondition): Promise<WriteOutcome>;
  /** Numbers and stores one item (a `terminal` one finishes the run), then wakes the run's watchers. */
  append(runId: string, item: NewRunStreamItem, options: AppendOptions): Promise<AppendOutcome>;
  /** Buffered items with `seq > afterSeq`; `undefined` for an unknown run. */
  itemsAfter(runId: string, afterSeq: number): Promise<RunItemsPage | undefined>;
  /** Calls `wake` after each item appended to the run, and when the run is removed; returns the unwatch function. */
  watch(runId: string, wake: () => void): () => void;
  /** Removes a run and its items. */
  delete(runId: string): Promise<boolean>;
  /** Runs not finished (pending, running, paused). */
  countActive(): Promise<number>;
  /**
   * Optional, for a store shared by instances (spec 08 §4): registers the handler of runs whose
   * owner instance died and that this store's instance has taken over (pending or running, never
   * paused); the handler resumes or ends each. Returns its removal. A store without it (the
   * in-memory one) has no other owners.
   */
  adoptOrphans?(adopt: (run: StoredRun) => void): () => void;
  /**
   * Optional, for a store that records owners: registers the reconciler of this instance's own runs.
   * Rounds of the store's upkeep hand `abandoned` each pending or running run owned by this live
   * instance that `executing()` (the ids whose invocation executes here) left out in two rounds in a
   * row: its invocation is gone from this process without its end written, and the registry ends it.
   * Returns its removal.
   */
  reconcileOwned?(executing: () => readonly string[], abandoned: (run: StoredRun) => void): () => void;
  /**
   * True when the runs kept here outlive the process (a database): at shutdown the registry leaves
   * paused runs paused, to be confirmed after a restart. Otherwise (the in-memory store) it cancels
   * them with reason `'shutdown'`, since nobody could confirm them later. @default false
   */
  readonly survivesRestart?: boolean;
}

/**
 * Injection token of the run store `RunsModule`'s registry uses, named like the interface, so
 * `@Inject(RunStore) store: RunStore` reads as it means. Bound to the in-memory store by default; a
 * `store` provider given to `RunsModule` (`PostgresRunStoreProvider`) binds another.
 */
export const RunStore = Symbol('RunStore');

/** The statuses a run ends in. */
export const FINISHED_STATUSES: readonly RunStatus[] = Object.freeze(['completed', 'failed', 'cancelled', 'timed_out']);

/** The statuses of an unfinished run. */
export const UNFINISHED_STATUSES: readonly RunStatus[] = Object.freeze(['pending', 'running', 'paused']);

/** True for `completed`, `failed`, `cancelled`, `timed_out`. */
export function isFinishedStatus(status: RunStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

/** The public record of a stored run: without the user id and the durable flag. */
export function statusRecord(run: StoredRun): RunStatusRecord {
  return Object.freeze({
    schema_version: 1,
    run_id: run.run_id,
    agent: run.agent,
    session_id: run.session_id,
    invocation_id: run.invocation_id,
    status: run.status,
    pending_call_ids: Object.freeze([...run.pending_call_ids]),
    created_at_ms: run.created_at_ms,
    updated_at_ms: run.updated_at_ms,
    last_seq: run.last_seq,
    error: run.error,
  });
}

/** The status record with the run's owner principal, for access checks and the console. */
export function ownedRecord(run: StoredRun): OwnedRun {
  return Object.freeze({ ...statusRecord(run), owner_principal: run.owner_principal });
}

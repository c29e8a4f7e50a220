import type { RunStreamItem } from '../run-registry.types';
import {
  UNFINISHED_STATUSES,
  type AppendOptions,
  type AppendOutcome,
  type NewRunStreamItem,
  type RunItemsPage,
  type RunPatch,
  type RunStore,
  type StoredRun,
  type WriteCondition,
  type WriteOutcome,
} from './run-store';

interface Entry {
  run: StoredRun;
  /** Consecutive seqs: `items[i].seq === items[0].seq + i`. */
  items: RunStreamItem[];
  finished: boolean;
  readonly watchers: Set<() => void>;
}

/**
 * The default {@link RunStore}: runs and their items in this process's memory, lost on restart.
 * Every operation completes in one synchronous step behind its promise, so each is atomic.
 */
export class InMemoryRunStore implements RunStore {
  private readonly runs = new Map<string, Entry>();
  /** Finished run ids, oldest finish first: the eviction order when `maxRuns` is reached. */
  private readonly finished = new Set<string>();

  async create(run: StoredRun, limits: { readonly maxRuns: number }): Promise<boolean> {
    if (this.runs.has(run.run_id)) throw new Error('run id already stored');
    while (this.runs.size >= limits.maxRuns) {
      const oldest = this.finished.values().next();
      if (oldest.done) return false;
      this.remove(oldest.value);
    }
    this.runs.set(run.run_id, { run: Object.freeze({ ...run }), items: [], finished: false, watchers: new Set() });
    return true;
  }

  async get(runId: string): Promise<StoredRun | undefined> {
    return this.runs.get(runId)?.run;
  }

  async update(runId: string, patch: RunPatch, condition: WriteCondition = {}): Promise<WriteOutcome> {
    const entry = this.writable(runId, condition);
    if (!entry) return { written: false, run: this.runs.get(runId)?.run };
    entry.run = Object.freeze({ ...entry.run, ...patch });
    return { written: true, run: entry.run };
  }

  async append(runId: string, item: NewRunStreamItem, options: AppendOptions): Promise<AppendOutcome> {
    const entry = this.writable(runId, options);
    if (!entry) return { written: false, run: this.runs.get(runId)?.run };
    const seq = entry.run.last_seq + 1;
    const numbered = Object.freeze({ seq, ...item }) as RunStreamItem;
    entry.items.push(numbered);
    if (entry.items.length > options.keepItems) entry.items.splice(0, entry.items.length - options.keepItems);
    entry.run = Object.freeze({ ...entry.run, ...options.patch, last_seq: seq });
    if (numbered.type === 'terminal') {
      entry.finished = true;
      this.finished.add(runId);
    }
    wakeAll(entry);
    return { written: true, run: entry.run, item: numbered };
  }

  async itemsAfter(runId: string, afterSeq: number): Promise<RunItemsPage | undefined> {
    const entry = this.runs.get(runId);
    if (!entry) return undefined;
    const lastSeq = entry.run.last_seq;
    const oldestSeq = entry.items.length > 0 ? entry.items[0].seq : lastSeq + 1;
    const from = Math.max(0, afterSeq + 1 - oldestSeq);
    return Object.freeze({ items: Object.freeze(entry.items.slice(from)), oldest_seq: oldestSeq, last_seq: lastSeq, finished: entry.finished });
  }

  watch(runId: string, wake: () => void): () => void {
    const entry = this.runs.get(runId);
    if (!entry) return () => {};
    // a wrapper per call, so the same function watched twice is two watchers
    const watcher = () => wake();
    entry.watchers.add(watcher);
    return () => entry.watchers.delete(watcher);
  }

  async delete(runId: string): Promise<boolean> {
    return this.remove(runId);
  }

  async countActive(): Promise<number> {
    return this.runs.size - this.finished.size;
  }

  private writable(runId: string, condition: WriteCondition): Entry | undefined {
    const entry = this.runs.get(runId);
    if (!entry || entry.finished) return undefined;
    return (condition.expect ?? UNFINISHED_STATUSES).includes(entry.run.status) ? entry : undefined;
  }

  private remove(runId: string): boolean {
    const entry = this.runs.get(runId);
    if (!entry) return false;
    this.runs.delete(runId);
    this.finished.delete(runId);
    wakeAll(entry);
    entry.watchers.clear();
    return true;
  }
}

function wakeAll(entry: Entry): void {
  for (const wake of [...entry.watchers]) {
    try {
      wake();
    } catch {
      // one watcher's failure must not stop the others or the write that woke them
    }
  }
}

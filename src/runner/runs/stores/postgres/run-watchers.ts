/**
 * The local watchers of runs (spec 08 §4): who to wake when a run's items change, whichever way the
 * news arrives (this process's own write, a NOTIFY from any instance, the poll fallback). It also
 * remembers the last `seq` heard of per watched run, so the poll wakes only runs that moved.
 */
export class RunWatchers {
  /** `onUnknownChange(runId)` hears of a wake without a `seq` (a removal), `onUnknownChange()` of a wake of all. */
  constructor(private readonly onUnknownChange: (runId?: string) => void = () => undefined) {}

  private readonly byRun = new Map<string, { readonly wakers: Set<() => void>; lastSeq: number | undefined }>();

  /** Adds a waker; returns its removal. The same function watched twice is two watchers. */
  watch(runId: string, wake: () => void): () => void {
    let entry = this.byRun.get(runId);
    if (!entry) {
      // unknown last seq: the first poll wakes, covering a notification lost before it
      entry = { wakers: new Set(), lastSeq: undefined };
      this.byRun.set(runId, entry);
    }
    const waker = () => wake();
    entry.wakers.add(waker);
    const owned = entry;
    return () => {
      owned.wakers.delete(waker);
      if (owned.wakers.size === 0 && this.byRun.get(runId) === owned) this.byRun.delete(runId);
    };
  }

  /** The last `seq` heard of for a watched run; `undefined` when nobody watches it or nothing was heard yet. */
  lastSeqOf(runId: string): number | undefined {
    return this.byRun.get(runId)?.lastSeq;
  }

  /** The watched run ids. */
  runIds(): string[] {
    return [...this.byRun.keys()];
  }

  /** Wakes the watchers of `runId`; `seq` (when known) is remembered. */
  wake(runId: string, seq?: number): void {
    if (seq === undefined) this.onUnknownChange(runId);
    const entry = this.byRun.get(runId);
    if (!entry) return;
    if (seq !== undefined && (entry.lastSeq === undefined || seq > entry.lastSeq)) entry.lastSeq = seq;
    wakeEach(entry.wakers);
  }

  /** A poll read `seq` (`-1`: the run is gone): wakes the run's watchers when it differs from what was heard. */
  polled(runId: string, seq: number): void {
    const entry = this.byRun.get(runId);
    if (!entry || entry.lastSeq === seq) return;
    entry.lastSeq = seq;
    wakeEach(entry.wakers);
  }

  /** Wakes every watcher (the listener reconnected: notifications may have been lost). */
  wakeAll(): void {
    this.onUnknownChange();
    for (const runId of this.runIds()) this.wake(runId);
  }

  /** A `<run_id>:<seq>` notification payload; anything else is ignored. */
  notified(payload: string): void {
    const colon = payload.lastIndexOf(':');
    if (colon <= 0) return;
    const seq = Number(payload.slice(colon + 1));
    if (!Number.isSafeInteger(seq) || seq < 0) return;
    this.wake(payload.slice(0, colon), seq === 0 ? undefined : seq);
  }
}

function wakeEach(wakers: ReadonlySet<() => void>): void {
  for (const wake of [...wakers]) {
    try {
      wake();
    } catch {
      // one watcher's failure must not stop the others
    }
  }
}

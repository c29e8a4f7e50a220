import type { RunItemsPage } from '../run-store';

/** Runs whose last page is kept, at most (the least recently read go first). */
const MAX_CACHED_RUNS = 1024;

/**
 * The reads of a run's items shared by every subscriber of this process (spec 08 §6 fan-out): one
 * read in flight per run, and its page served to each subscriber that asks for items after the
 * same or a later `seq`, for as long as the page holds every item heard of (`knownSeq`, from the
 * notifications, this process's own appends and the poll). Without it, each item of a run followed
 * by n subscribers cost n statements, which queued the run's own appends behind them.
 */
export class SharedRunReads {
  private readonly pages = new Map<string, { readonly afterSeq: number; readonly page: RunItemsPage }>();
  private readonly reading = new Map<string, Promise<RunItemsPage | undefined>>();

  constructor(
    private readonly read: (runId: string, afterSeq: number) => Promise<RunItemsPage | undefined>,
    /** The last `seq` heard of for a watched run; `undefined` for a run nobody here watches (never served from a page). */
    private readonly knownSeq: (runId: string) => number | undefined,
  ) {}

  async itemsAfter(runId: string, afterSeq: number): Promise<RunItemsPage | undefined> {
    const cached = this.cached(runId, afterSeq);
    if (cached) return cached;
    const pending = this.reading.get(runId);
    if (pending) {
      await pending.catch(() => undefined);
      const shared = this.cached(runId, afterSeq);
      if (shared) return shared;
    }
    return this.fetch(runId, afterSeq);
  }

  /** The run changed in a way a page cannot tell (removed, or notifications may have been lost). */
  forget(runId?: string): void {
    if (runId === undefined) this.pages.clear();
    else this.pages.delete(runId);
  }

  private cached(runId: string, afterSeq: number): RunItemsPage | undefined {
    const entry = this.pages.get(runId);
    const known = this.knownSeq(runId);
    // a known seq below 0 is a run the poll found gone
    if (!entry || afterSeq < entry.afterSeq || known === undefined || known < 0 || entry.page.last_seq < known) return undefined;
    const items = entry.page.items.filter((item) => item.seq > afterSeq);
    return Object.freeze({ ...entry.page, items: Object.freeze(items) });
  }

  private async fetch(runId: string, afterSeq: number): Promise<RunItemsPage | undefined> {
    const work = this.read(runId, afterSeq);
    this.reading.set(runId, work);
    try {
      const page = await work;
      this.pages.delete(runId);
      if (page !== undefined) {
        this.pages.set(runId, { afterSeq, page });
        if (this.pages.size > MAX_CACHED_RUNS) this.pages.delete(this.pages.keys().next().value as string);
      }
      return page;
    } finally {
      if (this.reading.get(runId) === work) this.reading.delete(runId);
    }
  }
}

import { isValidId } from '../../shared/ids/id-rule';
import type { RunStreamItem } from './run-registry.types';
import type { RunItemsPage, RunStore } from './stores/run-store';
import { RunnerError } from '../runner.errors';

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * One subscriber of a run's stream (spec 03 §9): the buffered items after `afterSeq`, then live
 * items, ending after the terminal item. It keeps no copy of the stream: on each wake-up it reads
 * the items after the last one it handed out, so a subscriber cannot miss or repeat an item, and one
 * that falls behind the buffer gets `run_events_evicted` instead of a gap. `return()` detaches it at
 * once, also while a `next()` is waiting, and touches nothing else.
 */
export class RunSubscription implements AsyncIterableIterator<RunStreamItem> {
  private opening: Promise<void> | undefined;
  private buffered: RunStreamItem[] = [];
  private lastSeq: number;
  private ended = false;
  /** An item was appended since the last read. */
  private stale = false;
  private wake: (() => void) | undefined;
  private unwatch: (() => void) | undefined;
  private reading: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: RunStore,
    private readonly runId: string,
    afterSeq: number,
  ) {
    this.lastSeq = afterSeq;
  }

  /**
   * Resolves once the replay position is known to be served; rejects with `run_not_found`,
   * `run_events_evicted` (`{oldest_seq}`) or `invalid_run_request` (`{field: 'after_seq'}`, past
   * the run's last item). The first `next()` waits for it too; an HTTP handler awaits it before it
   * sends headers.
   */
  ready(): Promise<void> {
    this.opening ??= this.open();
    return this.opening;
  }

  next(): Promise<IteratorResult<RunStreamItem, undefined>> {
    const result = this.reading.then(() => this.pull());
    this.reading = result.catch(() => undefined);
    return result;
  }

  /** Detaches this subscriber; pending and later `next()` calls end. */
  async return(): Promise<IteratorResult<RunStreamItem, undefined>> {
    this.detach();
    return DONE;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private async open(): Promise<void> {
    if (!isValidId(this.runId)) throw new RunnerError('run_not_found');
    // watch before the first read, so an item appended in between still wakes us
    this.unwatch = this.store.watch(this.runId, () => this.onAppend());
    try {
      const page = this.checked(await this.store.itemsAfter(this.runId, this.lastSeq));
      if (this.lastSeq > page.last_seq) throw new RunnerError('invalid_run_request', { field: 'after_seq' });
      this.buffered = [...page.items];
      // a reader that already saw the terminal item gets nothing more
      if (page.finished && page.items.length === 0) this.detach();
    } catch (error) {
      this.detach();
      throw error;
    }
  }

  private async pull(): Promise<IteratorResult<RunStreamItem, undefined>> {
    await this.ready();
    for (;;) {
      if (this.ended) return DONE;
      const item = this.buffered.shift();
      if (item) {
        this.lastSeq = item.seq;
        if (item.type === 'terminal') this.detach();
        return { done: false, value: item };
      }
      if (!this.stale) await new Promise<void>((resolve) => (this.wake = resolve));
      if (this.ended) return DONE;
      this.stale = false;
      try {
        this.buffered = [...this.checked(await this.store.itemsAfter(this.runId, this.lastSeq)).items];
      } catch (error) {
        this.detach();
        throw error;
      }
    }
  }

  /** The page, unless the run is gone or items after `lastSeq` were already evicted. */
  private checked(page: RunItemsPage | undefined): RunItemsPage {
    if (!page) throw new RunnerError('run_not_found');
    if (this.lastSeq + 1 < page.oldest_seq) throw new RunnerError('run_events_evicted', { oldest_seq: page.oldest_seq });
    return page;
  }

  private onAppend(): void {
    this.stale = true;
    this.resolveWait();
  }

  private detach(): void {
    this.ended = true;
    this.unwatch?.();
    this.unwatch = undefined;
    this.resolveWait();
  }

  private resolveWait(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

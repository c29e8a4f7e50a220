import type { RunItemsPage } from '../run-store';
import type { RunStreamItem } from '../../run-registry.types';
import { SharedRunReads } from './shared-run-reads';

const item = (seq: number) => ({ seq, type: 'resumed' }) as RunStreamItem;
const page = (lastSeq: number, afterSeq: number): RunItemsPage =>
  Object.freeze({ items: Array.from({ length: lastSeq - afterSeq }, (_, i) => item(afterSeq + i + 1)), oldest_seq: 1, last_seq: lastSeq, finished: false });

describe('SharedRunReads', () => {
  let lastSeq = 3;
  let known: number | undefined = 3;
  let reads = 0;
  const reader = () =>
    new SharedRunReads(
      async (_runId, afterSeq) => {
        reads += 1;
        await new Promise((resolve) => setImmediate(resolve));
        return page(lastSeq, afterSeq);
      },
      () => known,
    );
  beforeEach(() => {
    lastSeq = 3;
    known = 3;
    reads = 0;
  });

  it('serves many subscribers of one run from one read, each the items after its own seq', async () => {
    const shared = reader();
    const pages = await Promise.all([0, 0, 1, 2, 3].map((after) => shared.itemsAfter('run-1', after)));
    expect(reads).toBe(1);
    expect(pages.map((p) => p?.items.map((i) => i.seq))).toEqual([[1, 2, 3], [1, 2, 3], [2, 3], [3], []]);
  });

  it('reads again once an item newer than the page was heard of, and never serves an unwatched run from a page', async () => {
    const shared = reader();
    await shared.itemsAfter('run-1', 0);
    lastSeq = 4;
    known = 4;
    expect((await shared.itemsAfter('run-1', 3))?.items.map((i) => i.seq)).toEqual([4]);
    expect(reads).toBe(2);
    known = undefined;
    await shared.itemsAfter('run-1', 3);
    await shared.itemsAfter('run-1', 3);
    expect(reads).toBe(4);
  });

  it('reads for a subscriber behind the page, and again after forget()', async () => {
    const shared = reader();
    await shared.itemsAfter('run-1', 2);
    await shared.itemsAfter('run-1', 0);
    expect(reads).toBe(2);
    shared.forget('run-1');
    await shared.itemsAfter('run-1', 0);
    expect(reads).toBe(3);
  });
});

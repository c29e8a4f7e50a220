import { randomId } from '../../../shared/ids/random-id';
import type { RunStreamItem } from '../run-registry.types';
import type { NewRunStreamItem, RunStore, StoredRun } from '../stores/run-store';
import { until } from '../../testing/runner-harness';

/** A store under test, and how to empty it between tests (a shared database). */
export interface RunStoreFixture {
  readonly store: RunStore;
  /** Removes every run, so capacity tests start from an empty store. */
  reset(): Promise<void>;
}

/** A run record as the registry builds it. */
export function storedRun(runId: string, overrides: Partial<StoredRun> = {}): StoredRun {
  return {
    schema_version: 1,
    run_id: runId,
    agent: 'assistant',
    session_id: 'ses-1',
    invocation_id: null,
    status: 'pending',
    pending_call_ids: [],
    created_at_ms: 1,
    updated_at_ms: 1,
    last_seq: 0,
    error: null,
    user_id: 'u-1',
    owner_principal: 'p-1',
    durable: false,
    ...overrides,
  };
}

const KEEP = { keepItems: 100 };

/**
 * The behaviour every {@link RunStore} shares (spec 03 §9, 08 §4), run against the fixture that
 * `open` gives before each test (and `close` after). Wake-ups are awaited with `until`: a
 * shared store may deliver them through the database.
 */
export function describeRunStoreContract(name: string, open: () => Promise<RunStoreFixture>, close: () => Promise<void> = async () => undefined): void {
  describe(`${name}: the RunStore contract`, () => {
    let fixture: RunStoreFixture;
    let store: RunStore;
    const id = () => randomId('run-');
    const finish = (runId: string, at = 2) => store.append(runId, { type: 'terminal', status: 'completed' }, { ...KEEP, patch: { status: 'completed', updated_at_ms: at } });

    beforeAll(async () => {
      fixture = await open();
    });
    afterAll(close);
    beforeEach(async () => {
      await fixture.reset();
      store = fixture.store;
    });

    it('stores a frozen copy and reads it back', async () => {
      const runId = id();
      const given = storedRun(runId, { durable: true, user_id: 'u-2', owner_principal: 'p-2' });
      expect(await store.create(given, { maxRuns: 4 })).toBe(true);
      const stored = await store.get(runId);
      expect(stored).toEqual(given);
      expect(stored).not.toBe(given);
      expect(Object.isFrozen(stored)).toBe(true);
      expect(await store.get(id())).toBeUndefined();
    });

    it('refuses a new run when maxRuns unfinished runs are retained', async () => {
      const [a, b, c] = [id(), id(), id()];
      await store.create(storedRun(a), { maxRuns: 2 });
      await store.create(storedRun(b), { maxRuns: 2 });
      expect(await store.create(storedRun(c), { maxRuns: 2 })).toBe(false);
      expect(await store.get(c)).toBeUndefined();
      expect(await store.countActive()).toBe(2);
    });

    it('removes the run that finished first to make room, and wakes its watchers', async () => {
      const [a, b, c, d] = [id(), id(), id(), id()];
      for (const runId of [a, b, c]) await store.create(storedRun(runId), { maxRuns: 3 });
      await finish(c, 2);
      await finish(a, 3);
      let woken = 0;
      store.watch(c, () => woken++);
      expect(await store.create(storedRun(d), { maxRuns: 3 })).toBe(true);
      expect(await store.get(c)).toBeUndefined();
      expect(await store.get(a)).toBeDefined();
      await until(() => woken > 0, 5000);
      expect(await store.countActive()).toBe(2);
    });

    it('numbers items 1..n, applies the patch with last_seq in the same step, and freezes the item', async () => {
      const runId = id();
      await store.create(storedRun(runId), { maxRuns: 4 });
      const first = await store.append(runId, { type: 'resumed' }, { ...KEEP, patch: { status: 'running', updated_at_ms: 5 } });
      const second = await store.append(runId, { type: 'paused', pending_call_ids: ['call-1'] }, { ...KEEP, patch: { status: 'paused', pending_call_ids: ['call-1'], updated_at_ms: 6 } });
      expect(first).toMatchObject({ written: true, item: { seq: 1, type: 'resumed' }, run: { status: 'running', last_seq: 1, updated_at_ms: 5 } });
      expect(second).toMatchObject({ written: true, item: { seq: 2, type: 'paused' }, run: { status: 'paused', last_seq: 2, pending_call_ids: ['call-1'] } });
      expect(Object.isFrozen(second.written && second.item)).toBe(true);
      expect(await store.get(runId)).toMatchObject({ status: 'paused', last_seq: 2, pending_call_ids: ['call-1'] });
    });

    it('writes nothing after the terminal item: a finished run never changes', async () => {
      const runId = id();
      await store.create(storedRun(runId), { maxRuns: 4 });
      await finish(runId);
      const late = await store.append(runId, { type: 'terminal', status: 'failed' }, { ...KEEP, patch: { status: 'failed', updated_at_ms: 9 } });
      expect(late).toEqual({ written: false, run: expect.objectContaining({ status: 'completed', last_seq: 1 }) });
      expect(await store.update(runId, { status: 'running', updated_at_ms: 9 })).toEqual({ written: false, run: expect.objectContaining({ status: 'completed' }) });
      expect((await store.itemsAfter(runId, 0))?.items).toHaveLength(1);
      expect((await store.itemsAfter(runId, 0))?.finished).toBe(true);
    });

    it('writes only while the run has an expected status (compare-and-set)', async () => {
      const runId = id();
      await store.create(storedRun(runId, { status: 'paused' }), { maxRuns: 4 });
      const refused = await store.append(runId, { type: 'resumed' }, { ...KEEP, expect: ['running'] });
      expect(refused).toEqual({ written: false, run: expect.objectContaining({ status: 'paused', last_seq: 0 }) });
      const taken = await store.append(runId, { type: 'resumed' }, { ...KEEP, expect: ['paused'], patch: { status: 'running', updated_at_ms: 2 } });
      expect(taken.written).toBe(true);
      expect((await store.update(runId, { invocation_id: 'inv-1', updated_at_ms: 3 }, { expect: ['pending'] })).written).toBe(false);
      expect((await store.update(runId, { invocation_id: 'inv-1', updated_at_ms: 3 }, { expect: ['running'] })).run?.invocation_id).toBe('inv-1');
      expect((await store.get(runId))?.invocation_id).toBe('inv-1');
    });

    it('lets exactly one of concurrent compare-and-set writers win', async () => {
      const runId = id();
      await store.create(storedRun(runId, { status: 'paused' }), { maxRuns: 4 });
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, () => store.append(runId, { type: 'resumed' }, { ...KEEP, expect: ['paused'], patch: { status: 'running', updated_at_ms: 2 } })),
      );
      expect(outcomes.filter((outcome) => outcome.written)).toHaveLength(1);
      expect((await store.get(runId))?.last_seq).toBe(1);
    });

    it('numbers concurrent appends without a gap or a duplicate', async () => {
      const runId = id();
      await store.create(storedRun(runId, { status: 'running' }), { maxRuns: 4 });
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.append(runId, { type: 'resumed' }, KEEP)));
      const seqs = outcomes.map((outcome) => (outcome.written ? outcome.item.seq : 0)).sort((x, y) => x - y);
      expect(seqs).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
      expect((await store.itemsAfter(runId, 0))?.items.map((item) => item.seq)).toEqual(seqs);
    });

    it('refuses writes to an unknown run', async () => {
      expect(await store.append(id(), { type: 'resumed' }, KEEP)).toEqual({ written: false, run: undefined });
      expect(await store.update(id(), { updated_at_ms: 1 })).toEqual({ written: false, run: undefined });
    });

    it('keeps the newest keepItems items and reports the oldest seq still buffered', async () => {
      const runId = id();
      await store.create(storedRun(runId, { status: 'running' }), { maxRuns: 4 });
      for (let i = 0; i < 5; i++) await store.append(runId, { type: 'resumed' }, { keepItems: 3 });
      const page = await store.itemsAfter(runId, 0);
      expect(page).toMatchObject({ oldest_seq: 3, last_seq: 5, finished: false });
      expect(page?.items.map((item) => item.seq)).toEqual([3, 4, 5]);
      expect((await store.itemsAfter(runId, 3))?.items.map((item) => item.seq)).toEqual([4, 5]);
      expect((await store.itemsAfter(runId, 5))?.items).toEqual([]);
    });

    it('reports an empty run with oldest_seq 1 and an unknown one as undefined', async () => {
      const runId = id();
      await store.create(storedRun(runId), { maxRuns: 4 });
      expect(await store.itemsAfter(runId, 0)).toEqual({ items: [], oldest_seq: 1, last_seq: 0, finished: false });
      expect(await store.itemsAfter(id(), 0)).toBeUndefined();
    });

    it('round-trips every item and error JSON exactly, U+0000 and escapes included', async () => {
      const runId = id();
      await store.create(storedRun(runId, { status: 'running' }), { maxRuns: 4 });
      const items: NewRunStreamItem[] = [
        {
          type: 'event',
          event: {
            session_id: 'ses-1',
            seq: 1,
            event_id: 'ev-1',
            invocation_id: 'inv-1',
            author: 'assistant',
            kind: 'model_turn',
            content: { text: 'a\u0000b', nested: ['\\u0000', '\\\u0000', { 'k\u0000ey': 1.5e-7, big: 1e21, neg: -3, e: 'é😀\n\t"' }], empty: {} },
            created_at_ms: 3,
          },
        },
        { type: 'resume_failed', error: { code: 'admission_failed', details: { reason: 'admission_queue_full' } } },
        { type: 'terminal', status: 'cancelled', cancelled: 'stop\u0000now' },
      ];
      const error = { code: 'cancelled', details: { reason: 'stop\u0000now' } };
      for (const [index, item] of items.entries()) {
        const patch = index === items.length - 1 ? { status: 'cancelled' as const, error, updated_at_ms: 4 } : { updated_at_ms: 4 };
        expect((await store.append(runId, item, { ...KEEP, patch })).written).toBe(true);
      }
      const page = await store.itemsAfter(runId, 0);
      expect(page?.items).toEqual(items.map((item, index) => ({ seq: index + 1, ...item }) as RunStreamItem));
      expect((await store.get(runId))?.error).toEqual(error);
    });

    it('wakes each watcher after every append until it unwatches; a throwing watcher does not stop the others', async () => {
      const runId = id();
      await store.create(storedRun(runId, { status: 'running' }), { maxRuns: 4 });
      let seen = 0;
      const unwatchThrowing = store.watch(runId, () => {
        throw new Error('watcher failed');
      });
      const unwatch = store.watch(runId, () => seen++);
      await store.append(runId, { type: 'resumed' }, KEEP);
      await until(() => seen > 0, 5000);
      unwatch();
      unwatchThrowing();
      const before = seen;
      await store.append(runId, { type: 'resumed' }, KEEP);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(seen).toBe(before);
    });

    it('delete removes the run and its items and wakes its watchers', async () => {
      const runId = id();
      await store.create(storedRun(runId), { maxRuns: 4 });
      let woken = 0;
      const unwatch = store.watch(runId, () => woken++);
      expect(await store.delete(runId)).toBe(true);
      await until(() => woken > 0, 5000);
      expect(await store.get(runId)).toBeUndefined();
      expect(await store.itemsAfter(runId, 0)).toBeUndefined();
      expect(await store.delete(runId)).toBe(false);
      expect(await store.countActive()).toBe(0);
      unwatch();
    });
  });
}

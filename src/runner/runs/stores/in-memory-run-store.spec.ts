import { InMemoryRunStore } from './in-memory-run-store';
import { storedRun } from '../testing/run-store-contract';

const run = storedRun;

const KEEP = { keepItems: 100 };
const finish = (store: InMemoryRunStore, runId: string) =>
  store.append(runId, { type: 'terminal', status: 'completed' }, { ...KEEP, patch: { status: 'completed', updated_at_ms: 2 } });

describe('InMemoryRunStore', () => {
  describe('create and retention', () => {
    it('stores a frozen copy and reads it back', async () => {
      const store = new InMemoryRunStore();
      const given = run('run-a');
      expect(await store.create(given, { maxRuns: 4 })).toBe(true);
      const stored = await store.get('run-a');
      expect(stored).toEqual(given);
      expect(stored).not.toBe(given);
      expect(Object.isFrozen(stored)).toBe(true);
      expect(await store.get('run-b')).toBeUndefined();
    });

    it('refuses a new run when maxRuns unfinished runs are retained', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a'), { maxRuns: 2 });
      await store.create(run('run-b'), { maxRuns: 2 });
      expect(await store.create(run('run-c'), { maxRuns: 2 })).toBe(false);
      expect(await store.get('run-c')).toBeUndefined();
      expect(await store.countActive()).toBe(2);
    });

    it('removes the run that finished first to make room, and wakes its watchers', async () => {
      const store = new InMemoryRunStore();
      for (const id of ['run-a', 'run-b', 'run-c']) await store.create(run(id), { maxRuns: 3 });
      await finish(store, 'run-c');
      await finish(store, 'run-a');
      const wakes: string[] = [];
      store.watch('run-c', () => wakes.push('c'));
      expect(await store.create(run('run-d'), { maxRuns: 3 })).toBe(true);
      expect(await store.get('run-c')).toBeUndefined();
      expect(await store.get('run-a')).toBeDefined();
      expect(wakes).toEqual(['c']);
      expect(await store.countActive()).toBe(2);
    });
  });

  describe('append', () => {
    it('numbers items 1..n, applies the patch with last_seq in the same step, and freezes the item', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a'), { maxRuns: 4 });
      const first = await store.append('run-a', { type: 'resumed' }, { ...KEEP, patch: { status: 'running', updated_at_ms: 5 } });
      const second = await store.append('run-a', { type: 'paused', pending_call_ids: ['call-1'] }, { ...KEEP, patch: { status: 'paused', pending_call_ids: ['call-1'], updated_at_ms: 6 } });
      expect(first).toMatchObject({ written: true, item: { seq: 1, type: 'resumed' }, run: { status: 'running', last_seq: 1, updated_at_ms: 5 } });
      expect(second).toMatchObject({ written: true, item: { seq: 2, type: 'paused' }, run: { status: 'paused', last_seq: 2, pending_call_ids: ['call-1'] } });
      expect(Object.isFrozen(second.written && second.item)).toBe(true);
      expect(await store.get('run-a')).toMatchObject({ status: 'paused', last_seq: 2 });
    });

    it('writes nothing after the terminal item: a finished run never changes', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a'), { maxRuns: 4 });
      await finish(store, 'run-a');
      const late = await store.append('run-a', { type: 'terminal', status: 'failed' }, { ...KEEP, patch: { status: 'failed', updated_at_ms: 9 } });
      expect(late).toEqual({ written: false, run: expect.objectContaining({ status: 'completed', last_seq: 1 }) });
      expect(await store.update('run-a', { status: 'running', updated_at_ms: 9 })).toEqual({ written: false, run: expect.objectContaining({ status: 'completed' }) });
      expect((await store.itemsAfter('run-a', 0))?.items).toHaveLength(1);
    });

    it('writes only while the run has an expected status (compare-and-set)', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a', { status: 'paused' }), { maxRuns: 4 });
      const refused = await store.append('run-a', { type: 'resumed' }, { ...KEEP, expect: ['running'] });
      expect(refused).toEqual({ written: false, run: expect.objectContaining({ status: 'paused', last_seq: 0 }) });
      const taken = await store.append('run-a', { type: 'resumed' }, { ...KEEP, expect: ['paused'], patch: { status: 'running', updated_at_ms: 2 } });
      expect(taken.written).toBe(true);
      expect((await store.update('run-a', { invocation_id: 'inv-1', updated_at_ms: 3 }, { expect: ['pending'] })).written).toBe(false);
      expect((await store.update('run-a', { invocation_id: 'inv-1', updated_at_ms: 3 }, { expect: ['running'] })).run?.invocation_id).toBe('inv-1');
    });

    it('refuses writes to an unknown run', async () => {
      const store = new InMemoryRunStore();
      expect(await store.append('run-x', { type: 'resumed' }, KEEP)).toEqual({ written: false, run: undefined });
      expect(await store.update('run-x', { updated_at_ms: 1 })).toEqual({ written: false, run: undefined });
    });
  });

  describe('itemsAfter and the bounded buffer', () => {
    it('keeps the newest keepItems items and reports the oldest seq still buffered', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a', { status: 'running' }), { maxRuns: 4 });
      for (let i = 0; i < 5; i++) await store.append('run-a', { type: 'resumed' }, { keepItems: 3 });
      const page = await store.itemsAfter('run-a', 0);
      expect(page).toMatchObject({ oldest_seq: 3, last_seq: 5, finished: false });
      expect(page?.items.map((item) => item.seq)).toEqual([3, 4, 5]);
      expect((await store.itemsAfter('run-a', 3))?.items.map((item) => item.seq)).toEqual([4, 5]);
      expect((await store.itemsAfter('run-a', 5))?.items).toEqual([]);
    });

    it('reports an empty run with oldest_seq 1 and an unknown one as undefined', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a'), { maxRuns: 4 });
      expect(await store.itemsAfter('run-a', 0)).toEqual({ items: [], oldest_seq: 1, last_seq: 0, finished: false });
      expect(await store.itemsAfter('run-x', 0)).toBeUndefined();
    });
  });

  describe('watch and delete', () => {
    it('wakes each watcher after every append until it unwatches; a throwing watcher does not stop the others', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a', { status: 'running' }), { maxRuns: 4 });
      const seen: number[] = [];
      store.watch('run-a', () => {
        throw new Error('watcher failed');
      });
      const unwatch = store.watch('run-a', () => seen.push(1));
      await store.append('run-a', { type: 'resumed' }, KEEP);
      unwatch();
      await store.append('run-a', { type: 'resumed' }, KEEP);
      expect(seen).toEqual([1]);
    });

    it('delete removes the run and its items and wakes its watchers', async () => {
      const store = new InMemoryRunStore();
      await store.create(run('run-a'), { maxRuns: 4 });
      let woken = 0;
      store.watch('run-a', () => woken++);
      expect(await store.delete('run-a')).toBe(true);
      expect(woken).toBe(1);
      expect(await store.get('run-a')).toBeUndefined();
      expect(await store.itemsAfter('run-a', 0)).toBeUndefined();
      expect(await store.delete('run-a')).toBe(false);
      expect(await store.countActive()).toBe(0);
    });

    it('watching an unknown run never wakes', async () => {
      const store = new InMemoryRunStore();
      const unwatch = store.watch('run-x', () => {
        throw new Error('must not wake');
      });
      await store.create(run('run-x', { status: 'running' }), { maxRuns: 4 });
      await store.append('run-x', { type: 'resumed' }, KEEP);
      unwatch();
    });
  });
});

import { ManualClock } from '../shared/time/manual-clock';
import { cursorsOf, flushImmediates, observability, setup, thrown } from './testing/trace-store-fixture';

const A = 'tenant-a';
const B = 'tenant-b';

/** A clock whose timers never fire: only explicit `prune()` calls (and their follow-ups) run passes. */
class TimerlessClock extends ManualClock {
  override setTimer(): unknown {
    return {};
  }
}

/** A wall clock that stands still: retention must follow the monotonic clock alone. */
class FrozenWallClock extends ManualClock {
  override wallNow(): number {
    return 0;
  }
}

describe('§6 Retention, tombstones, pruning', () => {
  it('a record expires retentionMs after insertion, removed by the timer pass', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 100 });
    clock.advance(50);
    store.appendObservability(A, observability('r1'));
    clock.advance(999);
    expect(store.status().events).toBe(1);
    clock.advance(100);
    expect(store.status()).toMatchObject({ events: 0, encoded_bytes: 0, oldest_cursor: null, latest_cursor: 1 });
    expect(store.status().counters.retention_evictions).toBe(1);
  });

  it('retention follows the monotonic clock, not the wall clock', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000 }, new FrozenWallClock());
    store.appendObservability(A, observability('r1'));
    clock.advance(2000);
    expect(store.status().events).toBe(0);
  });

  it('an emptied stream stays as a tombstone, so a stale cursor gets replay_gap, not an empty success', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 100 });
    store.appendObservability(A, observability('r1'));
    store.appendObservability(A, observability('r1'));
    clock.advance(1100);
    expect(store.status()).toMatchObject({ events: 0, streams: 2, principals: 1 });
    const gap = thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 1 }));
    expect(gap.code).toBe('replay_gap');
    expect(gap.details).toEqual({ after_cursor: 1, oldest_available_cursor: null, latest_cursor: 2, evicted_through: 2 });
    expect(store.query(A, { run_id: 'r1' }, { afterCursor: 2 })).toMatchObject({ events: [], next_cursor: 2, latest_cursor: 2 });
    expect(store.query(A, 'all')).toMatchObject({ events: [], next_cursor: 2, latest_cursor: 2, oldest_available_cursor: null });
  });

  it('a tombstone lasts retentionMs; then it is pruned and a principal holding nothing is forgotten', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 100, maxPrincipals: 1 });
    store.appendObservability(A, observability('r1'));
    clock.advance(1000);
    expect(store.status()).toMatchObject({ events: 0, streams: 2 });
    clock.advance(900);
    expect(store.status().streams).toBe(2);
    expect(thrown(() => store.appendObservability(B, observability('r1'))).code).toBe('trace_principal_capacity_reached');
    clock.advance(100);
    const status = store.status();
    expect(status).toMatchObject({ streams: 0, principals: 0 });
    expect(status.counters.tombstones_pruned).toBe(2);
    expect(store.query(A, 'all', { afterCursor: 0 })).toMatchObject({ events: [], latest_cursor: 0 });
    expect(thrown(() => store.query(A, 'all', { afterCursor: 1 })).code).toBe('cursor_ahead');
    expect(store.appendObservability(B, observability('r1')).cursor).toBe(2);
  });

  it('a new record revives a tombstone with its evicted_through intact', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 100 });
    store.appendObservability(A, observability('r1'));
    clock.advance(1100);
    store.appendObservability(A, observability('r1'));
    expect(store.status().streams).toBe(2);
    expect(thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 0 })).details).toEqual({
      after_cursor: 0,
      oldest_available_cursor: 2,
      latest_cursor: 2,
      evicted_through: 1,
    });
    expect(cursorsOf(store.query(A, { run_id: 'r1' }, { afterCursor: 1 }))).toEqual([2]);
    clock.advance(1000);
    expect(store.status().streams).toBe(2);
    expect(store.status().counters.tombstones_pruned).toBe(0);
  });

  it('prune() returns {events_removed, streams_removed, lifecycle_receivers_removed, more_pending, status}', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000 }, new TimerlessClock());
    store.appendObservability(A, observability('r1'));
    store.lifecycleReceiver(B);
    clock.advance(1000);
    const first = store.prune();
    expect(first).toEqual({ events_removed: 1, streams_removed: 0, lifecycle_receivers_removed: 0, more_pending: false, status: store.status() });
    expect(Object.isFrozen(first)).toBe(true);
    clock.advance(86_400_000);
    expect(store.prune()).toMatchObject({ events_removed: 0, streams_removed: 2, lifecycle_receivers_removed: 1, more_pending: false });
    expect(store.status()).toMatchObject({ streams: 0, principals: 0, lifecycle_receivers: 0 });
  });

  it('each pass is bounded by maxPruneBatch; when work remains the next pass runs at once (setImmediate)', async () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000, maxPruneBatch: 2 });
    for (let i = 0; i < 5; i++) store.appendObservability(A, observability(`r${i}`));
    clock.advance(1000);
    expect(store.status().events).toBe(3);
    expect(store.status().counters.retention_evictions).toBe(2);
    await flushImmediates();
    expect(store.status().events).toBe(1);
    await flushImmediates();
    expect(store.status().events).toBe(0);
    expect(store.status().counters.retention_evictions).toBe(5);
    expect(clock.pendingTimers).toBe(1);
  });

  it('a manual prune() reports more_pending and schedules the follow-up too', async () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000, maxPruneBatch: 2 }, new TimerlessClock());
    for (let i = 0; i < 3; i++) store.appendObservability(A, observability('r1'));
    clock.advance(1000);
    const pass = store.prune();
    expect(pass).toMatchObject({ events_removed: 2, more_pending: true });
    expect(pass.status.events).toBe(1);
    await flushImmediates();
    expect(store.status().events).toBe(0);
    expect(store.prune().more_pending).toBe(false);
  });

  it('tombstones are pruned in bounded batches as well', async () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000, maxPruneBatch: 3 }, new TimerlessClock());
    store.appendObservability(A, observability('r1', { trace_id: 't1' }));
    clock.advance(1000);
    expect(store.prune()).toMatchObject({ events_removed: 1, streams_removed: 0 });
    clock.advance(1000);
    expect(store.prune()).toMatchObject({ streams_removed: 3, more_pending: true });
    await flushImmediates();
    expect(store.status()).toMatchObject({ streams: 0, principals: 0 });
    expect(store.status().counters.tombstones_pruned).toBe(4);
  });

  it('close() cancels a scheduled follow-up pass', async () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000, maxPruneBatch: 1 }, new TimerlessClock());
    for (let i = 0; i < 3; i++) store.appendObservability(A, observability('r1'));
    clock.advance(1000);
    expect(store.prune().more_pending).toBe(true);
    store.close();
    await flushImmediates();
    expect(thrown(() => store.status()).code).toBe('trace_store_unavailable');
  });

  it('creating a stream beyond maxStreams drops the tombstones expiring first', () => {
    // maxStreams = 1 × 16 + 1 = 17: 'all' plus 16 run streams
    const { store } = setup({ maxEvents: 1, maxPrincipals: 1 });
    for (let i = 1; i <= 16; i++) store.appendObservability(A, observability(`r${i}`));
    expect(store.status().streams).toBe(17);
    expect(store.status().counters.tombstones_pruned).toBe(0);
    store.appendObservability(A, observability('r17'));
    store.appendObservability(A, observability('r18'));
    expect(store.status().streams).toBe(17);
    expect(store.status().counters.tombstones_pruned).toBe(2);
    // r1 and r2 went first; r3 is still a tombstone
    expect(store.query(A, { run_id: 'r1' }, { afterCursor: 0 })).toMatchObject({ events: [], latest_cursor: 0 });
    expect(store.query(A, { run_id: 'r2' }, { afterCursor: 0 })).toMatchObject({ events: [], latest_cursor: 0 });
    expect(thrown(() => store.query(A, { run_id: 'r3' }, { afterCursor: 0 })).code).toBe('replay_gap');
    expect(cursorsOf(store.query(A, { run_id: 'r18' }))).toEqual([18]);
  });

  it('the record being stored revives its own tombstones before any is dropped', () => {
    // maxStreams = 17
    const { store } = setup({ maxEvents: 1, maxPrincipals: 1 });
    store.appendObservability(A, observability('r1', { trace_id: 't1' }));
    for (let i = 2; i <= 14; i++) store.appendObservability(A, observability(`r${i}`));
    expect(store.status().streams).toBe(17);
    // run r1 is the oldest tombstone, yet it is revived; trace t1 and r1 + t1 go instead
    store.appendObservability(A, observability('r1', { trace_id: 't2' }));
    expect(store.status().streams).toBe(17);
    expect(store.status().counters.tombstones_pruned).toBe(2);
    expect(thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 0 })).details).toEqual({
      after_cursor: 0,
      oldest_available_cursor: 15,
      latest_cursor: 15,
      evicted_through: 1,
    });
    expect(store.query(A, { trace_id: 't1' }, { afterCursor: 0 })).toMatchObject({ events: [], latest_cursor: 0 });
    expect(thrown(() => store.query(A, { run_id: 'r2' }, { afterCursor: 0 })).code).toBe('replay_gap');
  });

  it('expired records leave in cursor order across principals', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 1000 }, new TimerlessClock());
    store.appendObservability(A, observability('r1'));
    clock.advance(10);
    store.appendObservability(B, observability('r1'));
    clock.advance(10);
    store.appendObservability(A, observability('r2'));
    clock.advance(995);
    expect(store.prune().events_removed).toBe(2);
    expect(cursorsOf(store.query(A, 'all'))).toEqual([3]);
    expect(cursorsOf(store.query(B, 'all'))).toEqual([]);
  });
});

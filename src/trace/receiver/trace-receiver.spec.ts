import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { sha256Hex } from '../../shared/text/sha256';
import { ManualClock } from '../../shared/time/manual-clock';
import { PendingAdmission } from './pending-admission';
import { newCapability, TraceReceiver } from './trace-receiver';
import { TraceStore } from '../trace-store';
import { cursorsOf, flushImmediates, lifecycle, observability, setup, thrown } from '../testing/trace-store-fixture';

const A = 'tenant-a';
const B = 'tenant-b';

/** A clock whose timers never fire: time moves, only explicit `prune()` calls notice it. */
class TimerlessClock extends ManualClock {
  override setTimer(): unknown {
    return {};
  }
}

describe('§7 Lifecycle receivers', () => {
  describe('lifecycleReceiver(principal)', () => {
    it('returns the principal’s single receiver; another principal gets another', () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      expect(store.lifecycleReceiver(A)).toBe(receiver);
      expect(store.lifecycleReceiver(B)).not.toBe(receiver);
      expect(store.status()).toMatchObject({ lifecycle_receivers: 2, principals: 2, events: 0 });
    });

    it('beyond maxLifecycleReceivers (= maxPrincipals) is trace_lifecycle_receiver_capacity_reached {limit}', () => {
      const { store } = setup({ maxPrincipals: 2 });
      store.lifecycleReceiver(A);
      store.lifecycleReceiver(B);
      const error = thrown(() => store.lifecycleReceiver('tenant-c'));
      expect(error.code).toBe('trace_lifecycle_receiver_capacity_reached');
      expect(error.details).toEqual({ limit: 2 });
      expect(store.lifecycleReceiver(A)).toBeInstanceOf(TraceReceiver);
    });

    it('a new principal beyond maxPrincipals, with receivers to spare, is trace_principal_capacity_reached', () => {
      const { store } = setup({ maxPrincipals: 2 });
      store.appendObservability(A, observability('r1'));
      store.appendObservability(B, observability('r1'));
      const error = thrown(() => store.lifecycleReceiver('tenant-c'));
      expect(error.code).toBe('trace_principal_capacity_reached');
      expect(error.details).toEqual({ limit: 2 });
      expect(store.lifecycleReceiver(A)).toBeInstanceOf(TraceReceiver);
      expect(store.status().lifecycle_receivers).toBe(1);
    });

    it('capability ids are cap- and 32 random bytes in base64url', () => {
      const ids = new Set(Array.from({ length: 100 }, () => newCapability()));
      expect(ids.size).toBe(100);
      for (const id of ids) expect(id).toMatch(/^cap-[A-Za-z0-9_-]{43}$/);
    });
  });

  describe('the receiver object', () => {
    it('is frozen and opaque: no own keys; JSON and inspect show only the class name', () => {
      const principal = 'receiver-principal-canary';
      const { store } = setup();
      const receiver = store.lifecycleReceiver(principal);
      expect(Object.isFrozen(receiver)).toBe(true);
      expect(Reflect.ownKeys(receiver)).toEqual([]);
      expect(JSON.stringify(receiver)).toBe('"TraceReceiver"');
      expect(JSON.stringify({ receiver })).toBe('{"receiver":"TraceReceiver"}');
      expect(inspect(receiver, { showHidden: true, depth: 10 })).toBe('TraceReceiver');
      const everything = [JSON.stringify(receiver), inspect(receiver, { showHidden: true }), String(Object.entries(receiver))].join();
      expect(everything).not.toContain(principal);
      expect(everything).not.toContain(sha256Hex(principal));
      expect(everything).not.toContain('cap-');
    });

    it('isReceiver is a brand check: a look-alike or a plain counter fails', () => {
      const { store } = setup();
      const genuine = store.lifecycleReceiver(A);
      expect(TraceReceiver.isReceiver(genuine)).toBe(true);
      const lookAlikes: unknown[] = [
        { deliver: () => undefined, toJSON: () => 'TraceReceiver' },
        Object.create(TraceReceiver.prototype),
        Object.freeze(Object.assign(Object.create(TraceReceiver.prototype), { pending: { pending: 0, max: 1 } })),
        new Proxy(genuine, {}),
        new TraceReceiver(newCapability(), { pending: 0, max: 4, dropped: 0 } as unknown as PendingAdmission, store),
        null,
        'cap-x',
      ];
      for (const value of lookAlikes) expect(TraceReceiver.isReceiver(value)).toBe(false);
    });
  });

  describe('deliver(kind, event, owner?)', () => {
    it('returns undefined at once; the store appends in a later turn under the receiver’s principal', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      expect(receiver.deliver('workflow_lifecycle', lifecycle('run-1'))).toBeUndefined();
      expect(receiver.deliver('observability', observability('run-1'))).toBeUndefined();
      expect(store.status()).toMatchObject({ events: 0, lifecycle_pending: 2 });
      await flushImmediates();
      expect(store.status()).toMatchObject({ events: 2, lifecycle_pending: 0 });
      expect(store.query(A, { run_id: 'run-1' }).events.map((r) => r.kind)).toEqual(['workflow_lifecycle', 'observability']);
      expect(store.query(B, 'all').events).toEqual([]);
    });

    it('copies the event through its canonical JSON: later mutation is harmless', async () => {
      const { store } = setup();
      const event = observability('run-1', { agent: 'helper' });
      store.lifecycleReceiver(A).deliver('observability', event);
      (event.metadata as Record<string, unknown>).agent = 'changed';
      (event.metadata as Record<string, unknown>).run_id = 'run-2';
      await flushImmediates();
      expect(store.query(A, 'all').events[0].event.metadata).toEqual({ run_id: 'run-1', agent: 'helper' });
    });

    it('a malformed kind or receiver is ignored silently', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      receiver.deliver('metrics' as never, observability('r1'));
      receiver.deliver(undefined as never, observability('r1'));
      TraceReceiver.prototype.deliver.call({} as never, 'observability', observability('r1'));
      TraceReceiver.prototype.deliver.call(5 as never, 'observability', observability('r1'));
      TraceReceiver.prototype.deliver.call(Object.create(TraceReceiver.prototype), 'observability', observability('r1'));
      TraceReceiver.prototype.deliver.call(new TraceReceiver(newCapability(), new PendingAdmission(5), {}), 'observability', observability('r1'));
      await flushImmediates();
      const status = store.status();
      expect(status.events).toBe(0);
      expect(status.counters).toMatchObject({ lifecycle_delivery_dropped: 0, lifecycle_capability_rejected: 0, rejected: 0 });
    });

    it('a non-AbortSignal owner, a non-JSON event or one above 65 536 bytes is dropped and counted', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      const cyclic: Record<string, unknown> = observability('r1');
      cyclic.self = cyclic;
      const signal = new AbortController().signal;
      const drops: [unknown, unknown][] = [
        [observability('r1'), { aborted: false }],
        [observability('r1'), Object.create(AbortSignal.prototype)],
        [observability('r1'), new Proxy(signal, {})],
        [observability('r1'), 'signal'],
        [{ ...observability('r1'), at: new Date() }, undefined],
        [{ ...observability('r1'), fn: () => 1 }, undefined],
        [{ ...observability('r1'), n: 10n }, undefined],
        [{ ...observability('r1'), n: NaN }, undefined],
        [cyclic, undefined],
        [new Proxy(observability('r1'), {}), undefined],
        [Object.defineProperty(observability('r1'), 'event', { get: () => 'x', enumerable: true }), undefined],
        [observability('r1', { agent: 'x'.repeat(65_536) }), undefined],
        [undefined, undefined],
      ];
      for (const [event, owner] of drops) expect(receiver.deliver('observability', event, owner as AbortSignal)).toBeUndefined();
      expect(store.status()).toMatchObject({ lifecycle_pending: 0 });
      expect(store.status().counters.lifecycle_delivery_dropped).toBe(drops.length);
      await flushImmediates();
      expect(store.status().events).toBe(0);
    });

    it('an event just within 65 536 bytes is handed off (the store may still refuse it)', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      receiver.deliver('observability', observability('r1', { agent: 'x'.repeat(60_000) }));
      expect(store.status().counters.lifecycle_delivery_dropped).toBe(0);
      await flushImmediates();
      // agent is at most 512 bytes: the projection rejects it as content
      expect(store.status().counters).toMatchObject({ rejected: 1, content_rejected: 1 });
    });

    it('with the store stalled and maxLifecyclePending 2, ten deliveries give 2 accepted and 8 dropped', async () => {
      const { store } = setup({ maxLifecyclePending: 2 });
      const receiver = store.lifecycleReceiver(A);
      for (let i = 1; i <= 10; i++) receiver.deliver('workflow_lifecycle', lifecycle('run-1', i));
      expect(store.status()).toMatchObject({ lifecycle_pending: 2, events: 0 });
      expect(store.status().counters.lifecycle_delivery_dropped).toBe(8);
      await flushImmediates();
      const status = store.status();
      expect(status).toMatchObject({ lifecycle_pending: 0, events: 2 });
      expect(status.counters).toMatchObject({ accepted: 2, lifecycle_delivery_dropped: 8 });
      expect(store.query(A, 'all').events.map((r) => r.event.sequence)).toEqual([1, 2]);
    });

    it('append failures of a delivery only move the normal counters', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      receiver.deliver('workflow_lifecycle', { type: 'run_started' });
      receiver.deliver('observability', { ...observability('r1'), prompt: 'secret' });
      receiver.deliver('observability', { event: 'x', timestamp_ms: 1 });
      await flushImmediates();
      expect(store.status().counters).toMatchObject({ rejected: 3, content_rejected: 1, accepted: 0, lifecycle_capability_rejected: 0 });
      expect(store.status().lifecycle_pending).toBe(0);
    });
  });

  describe('forged and stale capabilities', () => {
    it('a receiver-shaped object with a plain counter stores nothing and is counted', async () => {
      const { store } = setup();
      store.lifecycleReceiver(A);
      const counter = { pending: 0, max: 10, dropped: 0 };
      const forged = new TraceReceiver(newCapability(), counter as unknown as PendingAdmission, store);
      for (let i = 0; i < 3; i++) forged.deliver('observability', observability('r1'));
      expect(store.status().lifecycle_pending).toBe(0);
      await flushImmediates();
      const status = store.status();
      expect(status.events).toBe(0);
      expect(status.lifecycle_pending).toBe(0);
      expect(status.counters).toMatchObject({ lifecycle_capability_rejected: 3, accepted: 0, rejected: 0 });
    });

    it('a genuine counter that is not the store’s own is counted and stores nothing', async () => {
      const { store } = setup();
      const other = new TraceStore({}, { clock: new ManualClock() });
      const stolen = new TraceReceiver(newCapability(), new PendingAdmission(5), store);
      expect(TraceReceiver.isReceiver(stolen)).toBe(true);
      stolen.deliver('observability', observability('r1'));
      other.lifecycleReceiver(A).deliver('observability', observability('r1'));
      await flushImmediates();
      expect(store.status().counters.lifecycle_capability_rejected).toBe(1);
      expect(store.status().events).toBe(0);
      expect(other.status().events).toBe(1);
    });

    it('a pruned receiver’s capability is rejected forever; the next call creates a different receiver', async () => {
      const clock = new TimerlessClock();
      const { store } = setup({ retentionMs: 1000, lifecycleReceiverTtlMs: 1000 }, clock);
      const old = store.lifecycleReceiver(A);
      clock.advance(1000);
      expect(store.prune().lifecycle_receivers_removed).toBe(1);
      expect(store.status()).toMatchObject({ lifecycle_receivers: 0, principals: 0 });
      const fresh = store.lifecycleReceiver(A);
      expect(fresh).not.toBe(old);
      old.deliver('observability', observability('r1'));
      fresh.deliver('observability', observability('r2'));
      await flushImmediates();
      expect(store.status().counters).toMatchObject({ lifecycle_capability_rejected: 1, lifecycle_receivers_pruned: 1, accepted: 1 });
      expect(cursorsOf(store.query(A, { run_id: 'r2' }))).toEqual([1]);
      expect(store.status().lifecycle_pending).toBe(0);
    });

    it('an expired receiver not yet pruned rejects deliveries; lifecycleReceiver refreshes it', async () => {
      const clock = new TimerlessClock();
      const { store } = setup({ retentionMs: 1000, lifecycleReceiverTtlMs: 1000 }, clock);
      const receiver = store.lifecycleReceiver(A);
      clock.advance(1000);
      receiver.deliver('observability', observability('r1'));
      await flushImmediates();
      expect(store.status().counters.lifecycle_capability_rejected).toBe(1);
      expect(store.lifecycleReceiver(A)).toBe(receiver);
      receiver.deliver('observability', observability('r1'));
      await flushImmediates();
      expect(store.status().events).toBe(1);
    });

    it('a delivery refreshes the TTL', async () => {
      const clock = new TimerlessClock();
      const { store } = setup({ retentionMs: 1000, lifecycleReceiverTtlMs: 1000 }, clock);
      const receiver = store.lifecycleReceiver(A);
      clock.advance(900);
      receiver.deliver('observability', observability('r1'));
      await flushImmediates();
      clock.advance(900);
      expect(store.prune().lifecycle_receivers_removed).toBe(0);
      clock.advance(100);
      expect(store.prune().lifecycle_receivers_removed).toBe(1);
    });

    it('a delivery to a closed store returns, releases its slot and drops', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      receiver.deliver('observability', observability('r1'));
      store.close();
      expect(receiver.deliver('observability', observability('r2'))).toBeUndefined();
      await flushImmediates();
      expect(thrown(() => store.status()).code).toBe('trace_store_unavailable');
    });
  });

  describe('owner binding', () => {
    it('a receiver with a live owner outlives its TTL and still accepts the terminal event', async () => {
      const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 100, lifecycleReceiverTtlMs: 1000 });
      const receiver = store.lifecycleReceiver(A);
      const run = new AbortController();
      receiver.deliver('workflow_lifecycle', lifecycle('run-1', 1), run.signal);
      await flushImmediates();
      expect(store.status().lifecycle_active_owners).toBe(1);
      clock.advance(10_000);
      expect(store.status()).toMatchObject({ lifecycle_receivers: 1 });
      expect(store.status().counters.lifecycle_receivers_pruned).toBe(0);
      receiver.deliver('workflow_lifecycle', lifecycle('run-1', 2, { type: 'run_terminal', outcome: 'completed' }), run.signal);
      await flushImmediates();
      const [terminal] = store.query(A, { run_id: 'run-1' }).events;
      expect(terminal.event).toMatchObject({ type: 'run_terminal', outcome: 'completed', sequence: 2 });
      expect(store.status().counters.lifecycle_capability_rejected).toBe(0);

      run.abort();
      expect(store.status().lifecycle_active_owners).toBe(0);
      clock.advance(1100);
      expect(store.status()).toMatchObject({ lifecycle_receivers: 0 });
      expect(store.status().counters.lifecycle_receivers_pruned).toBe(1);
      receiver.deliver('workflow_lifecycle', lifecycle('run-1', 3));
      await flushImmediates();
      expect(store.status().counters.lifecycle_capability_rejected).toBe(1);
    });

    it('binds each owner once with one {once: true} abort listener, removed on abort', async () => {
      const { store } = setup();
      const receiver = store.lifecycleReceiver(A);
      const run = new AbortController();
      for (let i = 1; i <= 3; i++) receiver.deliver('workflow_lifecycle', lifecycle('run-1', i), run.signal);
      await flushImmediates();
      expect(store.status().lifecycle_active_owners).toBe(1);
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
      run.abort();
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
      expect(store.status().lifecycle_active_owners).toBe(0);
    });

    it('an owner already aborted is not bound; the event is still stored', async () => {
      const { store } = setup();
      const run = new AbortController();
      run.abort();
      store.lifecycleReceiver(A).deliver('workflow_lifecycle', lifecycle('run-1'), run.signal);
      await flushImmediates();
      expect(store.status()).toMatchObject({ lifecycle_active_owners: 0, events: 1 });
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    });

    it('binds at most 1024 owners per receiver', async () => {
      const { store } = setup({ maxLifecyclePending: 4096 });
      const receiver = store.lifecycleReceiver(A);
      const owners = Array.from({ length: 1030 }, () => new AbortController());
      for (const owner of owners) receiver.deliver('observability', observability('r1'), owner.signal);
      await flushImmediates();
      expect(store.status().lifecycle_active_owners).toBe(1024);
      expect(getEventListeners(owners[1029].signal, 'abort')).toHaveLength(0);
      expect(store.status().counters.accepted).toBe(1030);
    });

    it('listeners are removed when the receiver goes, and on close()', async () => {
      const clock = new TimerlessClock();
      const { store } = setup({ retentionMs: 1000, lifecycleReceiverTtlMs: 1000 }, clock);
      const run = new AbortController();
      store.lifecycleReceiver(A).deliver('observability', observability('r1'), run.signal);
      await flushImmediates();
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
      store.close();
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    });
  });

  describe('balance', () => {
    it('whatever the mix of genuine, forged, dropped and stale deliveries, pending returns to 0 and forgeries store nothing', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom('genuine', 'invalid', 'oversized', 'plain', 'foreign', 'stale', 'badOwner'), { maxLength: 40 }), async (mix) => {
          const clock = new TimerlessClock();
          const store = new TraceStore({ retentionMs: 1000, lifecycleReceiverTtlMs: 1000, maxLifecyclePending: 8 }, { clock });
          const stale = store.lifecycleReceiver('stale');
          clock.advance(1000);
          store.prune();
          const receiver = store.lifecycleReceiver(A);
          const plain = new TraceReceiver(newCapability(), { pending: 0, max: 100, dropped: 0 } as unknown as PendingAdmission, store);
          const foreign = new TraceReceiver(newCapability(), new PendingAdmission(100), store);
          for (const kind of mix) {
            if (kind === 'genuine') receiver.deliver('observability', observability('r1'));
            if (kind === 'invalid') receiver.deliver('observability', { event: 'x' });
            if (kind === 'oversized') receiver.deliver('observability', observability('r1', { agent: 'x'.repeat(70_000) }));
            if (kind === 'plain') plain.deliver('observability', observability('forged'));
            if (kind === 'foreign') foreign.deliver('observability', observability('forged'));
            if (kind === 'stale') stale.deliver('observability', observability('forged'));
            if (kind === 'badOwner') receiver.deliver('observability', observability('r1'), {} as AbortSignal);
          }
          await flushImmediates();
          const status = store.status();
          expect(status.lifecycle_pending).toBe(0);
          expect(store.query('stale', 'all').events).toEqual([]);
          expect(store.query(A, { run_id: 'forged' }).events).toEqual([]);
          // every delivery ends in exactly one counter
          const c = status.counters;
          expect(c.accepted + c.rejected + c.lifecycle_delivery_dropped + c.lifecycle_capability_rejected).toBe(mix.length);
          expect(status.events).toBe(c.accepted);
          store.close();
        }),
        { numRuns: 60 },
      );
    });
  });
});

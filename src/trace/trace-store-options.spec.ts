import { ManualClock } from '../shared/time/manual-clock';
import { TraceStore } from './trace-store';
import { resolveTraceStoreOptions, type TraceStoreOptions } from './trace-store-options';
import { thrown } from './testing/trace-store-fixture';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

const construct = (options: unknown) => () => new TraceStore(options as TraceStoreOptions, { clock: new ManualClock() });
const offender = (options: unknown) => {
  const error = thrown(construct(options));
  expect(error.code).toBe('invalid_trace_store_options');
  return error.details;
};

/** Values each option's value rule refuses, the hard bound + 1 included. */
const INVALID: Record<keyof TraceStoreOptions, unknown[]> = {
  maxEvents: [0, -1, 1.5, NaN, Infinity, 2 ** 53, '8', null, true, {}, 1_000_001],
  maxBytes: [0, -1, 0.5, '1024', GiB + 1],
  maxEventBytes: [0, 2.5, 16 * MiB + 1, [], null],
  maxPrincipals: [0, 100_001, '1', false],
  maxEventsPerPrincipal: [0, -5, 1.1, 'all'],
  maxBytesPerPrincipal: [0, NaN, '4096'],
  retentionMs: [0, 86_400_001, 1.5, null],
  pruneIntervalMs: [0, -1, 0.25],
  maxQueryEvents: [0, Infinity],
  maxQueryBytes: [0, '1'],
  contentPolicy: ['Reject', 'PRUNE', '', 'drop', 0, null, true],
  lifecycleReceiverTtlMs: [0, 604_800_001, 2.5],
  maxLifecyclePending: [0, 4097, -1],
  maxPruneBatch: [0, 10_001, 1.5],
};

describe('§2 Options', () => {
  describe('defaults', () => {
    it('omitted, {} and undefined values all give the documented defaults and derived bounds', () => {
      const allUndefined = Object.fromEntries(Object.keys(INVALID).map((key) => [key, undefined]));
      for (const options of [undefined, {}, allUndefined]) {
        expect(resolveTraceStoreOptions(options)).toEqual({
          maxEvents: 4096,
          maxBytes: 16 * MiB,
          maxEventBytes: 256 * KiB,
          maxPrincipals: 1024,
          maxEventsPerPrincipal: 1024,
          maxBytesPerPrincipal: 4 * MiB,
          retentionMs: 300_000,
          pruneIntervalMs: 1000,
          maxQueryEvents: 256,
          maxQueryBytes: MiB,
          contentPolicy: 'reject',
          lifecycleReceiverTtlMs: 86_400_000,
          maxLifecyclePending: 1024,
          maxPruneBatch: 1024,
          maxLifecycleReceivers: 1024,
          maxDeliveryBytes: 65_536,
          maxStreams: 4096 * 16 + 1024,
          maxOwnersPerReceiver: 1024,
        });
      }
    });

    it('status() lists the 14 options under their snake_case keys', () => {
      const store = new TraceStore({ maxEvents: 10, contentPolicy: 'prune' }, { clock: new ManualClock() });
      expect(store.status().limits).toEqual({
        max_events: 10,
        max_bytes: 16 * MiB,
        max_event_bytes: 256 * KiB,
        max_principals: 1024,
        max_events_per_principal: 10,
        max_bytes_per_principal: 4 * MiB,
        retention_ms: 300_000,
        prune_interval_ms: 1000,
        max_query_events: 10,
        max_query_bytes: MiB,
        content_policy: 'prune',
        lifecycle_receiver_ttl_ms: 86_400_000,
        max_lifecycle_pending: 1024,
        max_prune_batch: 1024,
      });
    });

    it('defaults that depend on other options follow them', () => {
      const small = resolveTraceStoreOptions({ maxEvents: 100, maxBytes: 2 * MiB, maxEventBytes: 8 * KiB, retentionMs: 400, maxPrincipals: 7 });
      expect(small.maxEventsPerPrincipal).toBe(100);
      expect(small.maxBytesPerPrincipal).toBe(2 * MiB);
      expect(small.pruneIntervalMs).toBe(400);
      expect(small.maxQueryEvents).toBe(100);
      expect(small.maxQueryBytes).toBe(MiB);
      expect(small.maxLifecycleReceivers).toBe(7);
      expect(small.maxStreams).toBe(100 * 16 + 7);
    });

    it('per-principal and query byte defaults are raised to maxEventBytes when lower', () => {
      const big = resolveTraceStoreOptions({ maxBytes: 64 * MiB, maxEventBytes: 8 * MiB });
      expect(big.maxBytesPerPrincipal).toBe(8 * MiB);
      expect(big.maxQueryBytes).toBe(8 * MiB);
    });

    it('accepts every hard bound exactly', () => {
      const o = resolveTraceStoreOptions({
        maxEvents: 1_000_000,
        maxBytes: GiB,
        maxEventBytes: 16 * MiB,
        maxPrincipals: 100_000,
        maxEventsPerPrincipal: 1_000_000,
        maxBytesPerPrincipal: GiB,
        retentionMs: 86_400_000,
        pruneIntervalMs: 86_400_000,
        maxQueryEvents: 1_000_000,
        maxQueryBytes: 16 * MiB,
        lifecycleReceiverTtlMs: 604_800_000,
        maxLifecyclePending: 4096,
        maxPruneBatch: 10_000,
      });
      expect(o.maxStreams).toBe(16_000_000 + 100_000);
      expect(resolveTraceStoreOptions({ retentionMs: 5000, lifecycleReceiverTtlMs: 5000 }).lifecycleReceiverTtlMs).toBe(5000);
    });

    it('the resolved options are frozen', () => {
      expect(Object.isFrozen(resolveTraceStoreOptions({}))).toBe(true);
    });
  });

  describe('validation order', () => {
    it('a non-object is refused with empty details', () => {
      for (const options of [null, 5, 'maxEvents', [], [1], true, () => ({}), new Map(), new (class Options {})(), new Proxy({}, {})]) {
        expect(offender(options)).toEqual({});
      }
    });

    it('unknown keys are reported sorted, before any bad value', () => {
      expect(offender({ zeta: 1, maxEvents: 0, alpha: 2 })).toEqual({ fields: ['alpha', 'zeta'] });
      expect(offender({ MaxEvents: 10 })).toEqual({ field: 'MaxEvents' });
      expect(offender({ [Symbol('s')]: 1, 'not an identifier': 2 })).toEqual({ field: 'unknown' });
    });

    it.each(Object.entries(INVALID))('%s: every invalid value names it', (name, values) => {
      for (const value of values) expect(offender({ [name]: value })).toEqual({ field: name });
    });

    it('values are checked in table order: the first offender is named', () => {
      expect(offender({ maxPruneBatch: 0, retentionMs: 0, maxBytes: 0 })).toEqual({ field: 'maxBytes' });
      expect(offender({ contentPolicy: 'x', maxLifecyclePending: 0 })).toEqual({ field: 'contentPolicy' });
    });

    it('an accessor is an offender and its getter never runs', () => {
      let reads = 0;
      const options = Object.defineProperty({}, 'maxEvents', {
        enumerable: true,
        get: () => {
          reads++;
          return 10;
        },
      });
      expect(offender(options)).toEqual({ field: 'maxEvents' });
      expect(reads).toBe(0);
    });

    it('values are checked before cross bounds', () => {
      expect(offender({ maxEventsPerPrincipal: 5000, maxPruneBatch: 0 })).toEqual({ field: 'maxPruneBatch' });
    });

    it.each<[string, TraceStoreOptions]>([
      ['maxEventBytes', { maxBytes: 100 * KiB, maxEventBytes: 200 * KiB }],
      ['maxEventBytes', { maxBytes: 100 * KiB }],
      ['maxEventsPerPrincipal', { maxEvents: 10, maxEventsPerPrincipal: 11 }],
      ['maxBytesPerPrincipal', { maxEventBytes: 4096, maxBytesPerPrincipal: 4095 }],
      ['maxBytesPerPrincipal', { maxBytes: MiB, maxBytesPerPrincipal: MiB + 1 }],
      ['pruneIntervalMs', { retentionMs: 1000, pruneIntervalMs: 1001 }],
      ['pruneIntervalMs', { pruneIntervalMs: 300_001 }],
      ['maxQueryEvents', { maxEvents: 10, maxQueryEvents: 11 }],
      ['maxQueryBytes', { maxEventBytes: 4096, maxQueryBytes: 4095 }],
      ['maxQueryBytes', { maxBytes: MiB, maxQueryBytes: MiB + 1 }],
      ['lifecycleReceiverTtlMs', { retentionMs: 10_000, lifecycleReceiverTtlMs: 9_999 }],
    ])('cross bound: %s', (field, options) => {
      expect(offender(options)).toEqual({ field });
    });

    it('cross bounds are checked in table order', () => {
      expect(offender({ maxEvents: 10, maxQueryEvents: 11, maxEventsPerPrincipal: 11, retentionMs: 1000, pruneIntervalMs: 2000 })).toEqual({
        field: 'maxEventsPerPrincipal',
      });
    });

    it('an option error never echoes a value', () => {
      const error = thrown(construct({ contentPolicy: 'secret-canary-value' }));
      expect(error.message).not.toContain('secret-canary-value');
      expect(JSON.stringify(error.details)).not.toContain('secret-canary-value');
    });
  });

  describe('deps', () => {
    it('a bad clock or an unknown dependency is invalid_trace_store_request', () => {
      for (const deps of [5, null, { clock: {} }, { clock: { monotonicNow: () => 0 } }, { clock: new ManualClock(), logger: {} }, { clock: new Proxy(new ManualClock(), {}) }]) {
        const error = thrown(() => new TraceStore({}, deps as never));
        expect(error.code).toBe('invalid_trace_store_request');
        expect(error.details).toEqual({});
      }
    });

    it('no deps take the system clock, whose unref\'d timer never holds the process', () => {
      const store = new TraceStore();
      expect(store.status().latest_cursor).toBe(0);
      store.close();
    });
  });
});

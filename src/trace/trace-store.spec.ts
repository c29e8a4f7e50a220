import { inspect } from 'node:util';
import { sha256Hex } from '../shared/text/sha256';
import { ManualClock } from '../shared/time/manual-clock';
import { TraceStore } from './trace-store';
import { TraceStoreError } from './trace-store.errors';
import type { TraceQueryOptions, TraceSelector } from './trace-store.types';
import { cursorsOf, lifecycle, observability, setup, thrown } from './testing/trace-store-fixture';

const A = 'tenant-a';
const B = 'tenant-b';

/** The size a stored record counts: the UTF-8 bytes of its JSON. */
const sizeOf = (record: unknown): number => Buffer.byteLength(JSON.stringify(record), 'utf8');

describe('§1 Purpose and shape', () => {
  it('every public method answers synchronously', () => {
    const { store } = setup();
    const results = [
      store.appendObservability(A, observability('r1')),
      store.appendLifecycle(A, lifecycle('r1')),
      store.query(A, 'all'),
      store.lifecycleReceiver(A),
      store.prune(),
      store.status(),
      store.principalStatus(A),
    ];
    for (const result of results) expect(result).not.toBeInstanceOf(Promise);
  });

  it('arms one prune timer on the injected clock; close() stops it', () => {
    const { store, clock } = setup({ retentionMs: 1000, pruneIntervalMs: 250 });
    expect(clock.pendingTimers).toBe(1);
    clock.advance(1000);
    expect(clock.pendingTimers).toBe(1);
    store.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('after close() every method throws trace_store_unavailable; close() again does nothing', () => {
    const { store } = setup();
    store.appendObservability(A, observability('r1'));
    store.close();
    const calls: (() => unknown)[] = [
      () => store.appendObservability(A, observability('r1')),
      () => store.appendLifecycle(A, lifecycle('r1')),
      () => store.query(A, 'all'),
      () => store.lifecycleReceiver(A),
      () => store.prune(),
      () => store.status(),
      () => store.principalStatus(A),
      () => store.query(5 as never, 5 as never, 5 as never),
    ];
    for (const call of calls) {
      const error = thrown(call);
      expect(error.code).toBe('trace_store_unavailable');
      expect(error.details).toEqual({});
    }
    expect(() => store.close()).not.toThrow();
  });

  it('bad input of every kind leaves the store serving', () => {
    const { store } = setup();
    const hostile = [undefined, null, 5, 'x'.repeat(300), [], new Proxy({}, {}), Object.defineProperty({}, 'event', { get: () => 'x', enumerable: true })];
    for (const value of hostile) {
      thrown(() => store.appendObservability(value as never, value));
      thrown(() => store.appendObservability(A, value));
      thrown(() => store.appendLifecycle(A, value));
      thrown(() => store.query(A, value as never));
      thrown(() => store.principalStatus(value as never));
      thrown(() => store.lifecycleReceiver(value as never));
    }
    expect(store.appendObservability(A, observability('r1'))).toEqual({ cursor: 1 });
    expect(cursorsOf(store.query(A, 'all'))).toEqual([1]);
  });
});

describe('§3 Principals', () => {
  const invalidPrincipals: unknown[] = ['', 'x'.repeat(257), 'é'.repeat(129), 'bad\uD800', '\uDC00', 5, null, undefined, {}, ['a'], Symbol('p')];

  it.each(invalidPrincipals.map((p, i) => [i, p]))('invalid principal #%s is invalid_trace_principal in every principal-taking method', (_, principal) => {
    const { store } = setup();
    const calls = [
      () => store.appendObservability(principal as string, observability('r1')),
      () => store.appendLifecycle(principal as string, lifecycle('r1')),
      () => store.query(principal as string, 'all'),
      () => store.lifecycleReceiver(principal as string),
      () => store.principalStatus(principal as string),
    ];
    for (const call of calls) {
      const error = thrown(call);
      expect(error.code).toBe('invalid_trace_principal');
      expect(error.details).toEqual({});
    }
    expect(store.status().counters.rejected).toBe(2);
    expect(store.status().principals).toBe(0);
  });

  it('accepts 1..256 UTF-8 bytes, control characters included (a principal is only hashed)', () => {
    const { store } = setup();
    for (const principal of ['x', 'x'.repeat(256), 'é'.repeat(128), '😀'.repeat(64), 'line\nbreak\u0000nul']) {
      store.appendObservability(principal, observability('r1'));
      expect(store.principalStatus(principal).events).toBe(1);
    }
  });

  it('another principal sees nothing and cannot tell whether streams exist', () => {
    const { store } = setup();
    store.appendObservability(A, observability('r1', { trace_id: 't1' }));
    const unknown = { events: [], next_cursor: 0, oldest_available_cursor: null, latest_cursor: 0, encoded_bytes: 0, truncated: false };
    expect(store.query(B, 'all')).toEqual(unknown);
    expect(store.query(B, { run_id: 'r1' })).toEqual(unknown);
    expect(store.query(B, { run_id: 'r1', trace_id: 't1' }, { afterCursor: 0 })).toEqual(unknown);
    expect(store.query(B, { run_id: 'never' })).toEqual(unknown);
    expect(thrown(() => store.query(B, { run_id: 'r1' }, { afterCursor: 1 })).details).toEqual(
      thrown(() => store.query(B, { run_id: 'never' }, { afterCursor: 1 })).details,
    );
    expect(store.principalStatus(B)).toEqual({ schema_version: 1, events: 0, encoded_bytes: 0, oldest_cursor: null, latest_cursor: 0 });
    expect(store.status().principals).toBe(1);
  });

  it('a new principal beyond maxPrincipals gets trace_principal_capacity_reached; held ones go on', () => {
    const { store } = setup({ maxPrincipals: 2 });
    store.appendObservability(A, observability('r1'));
    store.appendObservability(B, observability('r1'));
    const error = thrown(() => store.appendObservability('tenant-c', observability('r1')));
    expect(error.code).toBe('trace_principal_capacity_reached');
    expect(error.details).toEqual({ limit: 2 });
    expect(store.appendObservability(A, observability('r2'))).toEqual({ cursor: 3 });
    expect(store.query('tenant-c', 'all').events).toEqual([]);
    expect(store.principalStatus('tenant-c').events).toBe(0);
    const status = store.status();
    expect(status.principals).toBe(2);
    expect(status.counters.rejected).toBe(1);
    expect(status.counters.accepted).toBe(3);
  });

  it('capacity is checked before the event: an invalid event of a new principal still reads as capacity', () => {
    const { store } = setup({ maxPrincipals: 1 });
    store.appendObservability(A, observability('r1'));
    expect(thrown(() => store.appendObservability(B, { nonsense: true })).code).toBe('trace_principal_capacity_reached');
  });

  it('queries and status reads never make a principal held', () => {
    const { store } = setup({ maxPrincipals: 1 });
    store.query(B, 'all');
    store.query(B, { run_id: 'x' });
    store.principalStatus(B);
    expect(store.status().principals).toBe(0);
    store.appendObservability(A, observability('r1'));
    expect(store.status().principals).toBe(1);
  });
});

describe('§4 Append', () => {
  it('returns frozen {cursor}: 1 first, strictly increasing across principals and kinds', () => {
    const { store } = setup();
    const first = store.appendObservability(A, observability('r1'));
    expect(first).toEqual({ cursor: 1 });
    expect(Object.isFrozen(first)).toBe(true);
    expect(store.appendLifecycle(B, lifecycle('r1')).cursor).toBe(2);
    expect(store.appendObservability(A, observability('r2')).cursor).toBe(3);
  });

  it('stores a deep-frozen record {cursor, kind, timestamp_ms, identity, event} on the wall clock', () => {
    const clock = new ManualClock(5000);
    const { store } = setup({}, clock);
    store.appendObservability(A, observability('r1', { trace_id: 't1', agent: 'helper' }, { measurements: { duration_ms: 3 } }));
    store.appendLifecycle(A, lifecycle('r1', 2));
    const [obs, life] = store.query(A, 'all').events;
    expect(obs).toEqual({
      cursor: 1,
      kind: 'observability',
      timestamp_ms: clock.wallNow(),
      identity: { run_id: 'r1', trace_id: 't1' },
      event: {
        event: 'runner.tool.call',
        timestamp_ms: 1,
        measurements: { duration_ms: 3 },
        metadata: { run_id: 'r1', agent: 'helper', trace_id: 't1' },
        content_captured: false,
      },
    });
    expect(obs).not.toHaveProperty('content_pruned');
    expect(life.kind).toBe('workflow_lifecycle');
    expect(life.identity).toEqual({ run_id: 'r1', workflow_id: 'r1', invocation_id: 'inv-r1' });
    for (const frozen of [obs, obs.identity, obs.event, obs.event.metadata, life.event]) expect(Object.isFrozen(frozen)).toBe(true);
  });

  it('holds no reference into the input', () => {
    const { store } = setup();
    const input = observability('r1', { agent: 'helper' });
    store.appendObservability(A, input);
    (input.metadata as Record<string, unknown>).agent = 'changed';
    expect((store.query(A, 'all').events[0].event.metadata as Record<string, unknown>).agent).toBe('helper');
  });

  it('a rejected append changes nothing but counters, and consumes no cursor', () => {
    const { store } = setup();
    const before = store.status();
    for (const [event, code] of [
      [{ timestamp_ms: 1, metadata: { run_id: 'r1' } }, 'invalid_trace_event'],
      [{ event: 'x', timestamp_ms: 1 }, 'trace_identity_required'],
      [{ ...observability('r1'), payload: 'prompt' }, 'trace_content_rejected'],
    ] as const) {
      expect(thrown(() => store.appendObservability(A, event)).code).toBe(code);
    }
    expect(thrown(() => store.appendLifecycle(A, { type: 'x' })).code).toBe('invalid_trace_lifecycle_event');
    const after = store.status();
    expect({ ...after, counters: undefined }).toEqual({ ...before, counters: undefined });
    expect(after.counters).toEqual({ ...before.counters, rejected: 4, content_rejected: 1 });
    expect(store.appendObservability(A, observability('r1')).cursor).toBe(1);
  });

  it("contentPolicy 'prune' stores what is allowed and marks the record content_pruned", () => {
    const { store } = setup({ contentPolicy: 'prune' });
    store.appendObservability(A, { ...observability('r1'), payload: 'the prompt', content_captured: true });
    const [record] = store.query(A, 'all').events;
    expect(record.content_pruned).toBe(true);
    expect(record.event).not.toHaveProperty('payload');
    expect(record.event.content_captured).toBe(false);
    expect(store.status().counters.content_rejected).toBe(0);
  });

  it('the size of a record is the UTF-8 length of its JSON, cursor included', () => {
    const { store } = setup();
    for (let i = 1; i <= 12; i++) store.appendObservability(A, observability('r-é', { agent: '😀'.repeat(i) }));
    const page = store.query(A, 'all');
    const sizes = page.events.map(sizeOf);
    expect(page.encoded_bytes).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(store.status().encoded_bytes).toBe(page.encoded_bytes);
    expect(store.principalStatus(A).encoded_bytes).toBe(page.encoded_bytes);
  });

  it('a record above max_event_bytes is trace_event_too_large {limit}; one exactly at it is stored', () => {
    const event = observability('r1', { agent: 'a'.repeat(300) });
    const probe = setup();
    probe.store.appendObservability(A, event);
    const size = sizeOf(probe.store.query(A, 'all').events[0]);

    const exact = setup({ maxEventBytes: size }).store;
    expect(exact.appendObservability(A, event)).toEqual({ cursor: 1 });

    const tight = setup({ maxEventBytes: size - 1 }).store;
    const error = thrown(() => tight.appendObservability(A, event));
    expect(error.code).toBe('trace_event_too_large');
    expect(error.details).toEqual({ limit: size - 1 });
    const status = tight.status();
    expect(status.counters).toMatchObject({ rejected: 1, oversized_rejected: 1, accepted: 0 });
    expect(status.events).toBe(0);
    expect(status.principals).toBe(0);
  });

  it('capacity by eviction: the principal’s oldest first, counted in capacity_evictions', () => {
    const { store } = setup({ maxEvents: 10, maxEventsPerPrincipal: 2 });
    store.appendObservability(B, observability('b1'));
    for (let i = 1; i <= 3; i++) store.appendObservability(A, observability(`a${i}`));
    expect(cursorsOf(store.query(A, 'all'))).toEqual([3, 4]);
    expect(cursorsOf(store.query(B, 'all'))).toEqual([1]);
    expect(store.status().counters.capacity_evictions).toBe(1);
  });

  it('then the globally oldest, whoever holds it', () => {
    const { store } = setup({ maxEvents: 3 });
    store.appendObservability(A, observability('a1'));
    store.appendObservability(B, observability('b1'));
    store.appendObservability(A, observability('a2'));
    store.appendObservability(B, observability('b2'));
    expect(cursorsOf(store.query(A, 'all'))).toEqual([3]);
    expect(cursorsOf(store.query(B, 'all'))).toEqual([2, 4]);
    expect(store.status()).toMatchObject({ events: 3, oldest_cursor: 2, latest_cursor: 4 });
    expect(store.status().counters.capacity_evictions).toBe(1);
  });

  it('byte limits evict too, per principal and globally', () => {
    const event = (run: string) => observability(run);
    const probe = setup().store;
    probe.appendObservability(A, event('r1'));
    const size = sizeOf(probe.query(A, 'all').events[0]);

    const perPrincipal = setup({ maxEventBytes: size, maxBytesPerPrincipal: 2 * size + 1 }).store;
    for (let i = 1; i <= 3; i++) perPrincipal.appendObservability(A, event(`r${i}`));
    expect(cursorsOf(perPrincipal.query(A, 'all'))).toEqual([2, 3]);

    const global = setup({ maxEventBytes: size, maxBytes: 2 * size + 1 }).store;
    global.appendObservability(A, event('r1'));
    global.appendObservability(B, event('r2'));
    global.appendObservability(B, event('r3'));
    expect(cursorsOf(global.query(A, 'all'))).toEqual([]);
    expect(cursorsOf(global.query(B, 'all'))).toEqual([2, 3]);
    expect(global.status().counters.capacity_evictions).toBe(1);
    expect(global.status().encoded_bytes).toBeLessThanOrEqual(2 * size + 1);
  });

  it('indexes a record in one stream per subset of its identity members', () => {
    const { store } = setup();
    store.appendObservability(A, observability('r1', { trace_id: 't1', invocation_id: 'i1' }));
    expect(store.status().streams).toBe(8);
    const selectors: TraceSelector[] = [
      'all',
      { run_id: 'r1' },
      { trace_id: 't1' },
      { invocation_id: 'i1' },
      { run_id: 'r1', trace_id: 't1' },
      { run_id: 'r1', invocation_id: 'i1' },
      { trace_id: 't1', invocation_id: 'i1' },
      { invocation_id: 'i1', trace_id: 't1', run_id: 'r1' },
    ];
    for (const selector of selectors) expect(cursorsOf(store.query(A, selector))).toEqual([1]);
    expect(cursorsOf(store.query(A, { workflow_id: 'r1' }))).toEqual([]);
    expect(cursorsOf(store.query(A, { run_id: 'r1', workflow_id: 'r1' }))).toEqual([]);
    store.appendObservability(A, observability('r2', { trace_id: 't1' }));
    // new: run r2 and run r2 + trace t1; 'all' and trace t1 exist
    expect(store.status().streams).toBe(8 + 2);
  });

  it('lifecycle and observability events of one run share the run stream', () => {
    const { store } = setup();
    store.appendLifecycle(A, lifecycle('run-1'));
    store.appendObservability(A, observability('run-1'));
    store.appendObservability(A, observability('run-2'));
    expect(store.query(A, { run_id: 'run-1' }).events.map((r) => r.kind)).toEqual(['workflow_lifecycle', 'observability']);
  });
});

describe('§5 Query', () => {
  it('the worked example: maxEventsPerPrincipal 2 and three appends', () => {
    const { store } = setup({ maxEventsPerPrincipal: 2 });
    for (let i = 0; i < 3; i++) store.appendObservability(A, observability('r1'));
    const gap = thrown(() => store.query(A, 'all', { afterCursor: 0 }));
    expect(gap.code).toBe('replay_gap');
    expect(gap.details).toEqual({ after_cursor: 0, oldest_available_cursor: 2, latest_cursor: 3, evicted_through: 1 });
    expect(thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 0 })).details).toEqual(gap.details);
    expect(cursorsOf(store.query(A, 'all', { afterCursor: 1 }))).toEqual([2, 3]);
    expect(cursorsOf(store.query(A, 'all'))).toEqual([2, 3]);
    expect(store.query(A, 'all')).toMatchObject({ next_cursor: 3, oldest_available_cursor: 2, latest_cursor: 3, truncated: false });
  });

  it('pages with limit: truncated while records remain, next_cursor continues', () => {
    const { store } = setup();
    for (let i = 0; i < 5; i++) store.appendObservability(A, observability('r1'));
    const pages: [number[], number, boolean][] = [];
    let after: number | undefined;
    for (let i = 0; i < 4; i++) {
      const page = store.query(A, 'all', after === undefined ? { limit: 2 } : { limit: 2, afterCursor: after });
      pages.push([cursorsOf(page), page.next_cursor, page.truncated]);
      after = page.next_cursor;
    }
    expect(pages).toEqual([
      [[1, 2], 2, true],
      [[3, 4], 4, true],
      [[5], 5, false],
      [[], 5, false],
    ]);
    expect(store.query(A, 'all', { limit: 5 }).truncated).toBe(false);
  });

  it('pages with maxBytes: stops before the record that would exceed it', () => {
    const { store } = setup({ maxEventBytes: 1024 });
    for (let i = 0; i < 9; i++) store.appendObservability(A, observability('r1'));
    const size = sizeOf(store.query(A, 'all').events[0]);
    const fit = Math.floor(1024 / size);
    const page = store.query(A, 'all', { maxBytes: 1024 });
    expect(page.events).toHaveLength(fit);
    expect(page.encoded_bytes).toBe(fit * size);
    expect(page.truncated).toBe(true);
    const all = store.query(A, 'all', { maxBytes: 9 * size });
    expect(all.events).toHaveLength(9);
    expect(all.truncated).toBe(false);
  });

  it('next_cursor without records: afterCursor when given, else latest_cursor', () => {
    const { store } = setup();
    store.appendObservability(A, observability('r1'));
    store.appendObservability(A, observability('r2'));
    expect(store.query(A, { run_id: 'r1' }, { afterCursor: 1 })).toMatchObject({ events: [], next_cursor: 1, latest_cursor: 1 });
    expect(store.query(A, { run_id: 'r2' }, { afterCursor: 2 }).next_cursor).toBe(2);
    expect(store.query(A, { run_id: 'none' })).toMatchObject({ next_cursor: 0, latest_cursor: 0, oldest_available_cursor: null });
  });

  it('latest_cursor is the stream’s own; beyond it is cursor_ahead (409)', () => {
    const { store } = setup();
    store.appendObservability(A, observability('r1'));
    store.appendObservability(A, observability('r2'));
    expect(store.query(A, { run_id: 'r1' }).latest_cursor).toBe(1);
    const error = thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 2 }));
    expect(error.code).toBe('cursor_ahead');
    expect(error.details).toEqual({ after_cursor: 2, oldest_available_cursor: 1, latest_cursor: 1, evicted_through: 0 });
    expect(thrown(() => store.query(A, 'all', { afterCursor: 3 })).code).toBe('cursor_ahead');
    expect(thrown(() => store.query(B, 'all', { afterCursor: 1 })).details).toEqual({
      after_cursor: 1,
      oldest_available_cursor: null,
      latest_cursor: 0,
      evicted_through: 0,
    });
  });

  it('gaps are checked only for an explicit afterCursor', () => {
    const { store } = setup({ maxEventsPerPrincipal: 1 });
    store.appendObservability(A, observability('r1'));
    store.appendObservability(A, observability('r1'));
    expect(cursorsOf(store.query(A, 'all'))).toEqual([2]);
    expect(cursorsOf(store.query(A, 'all', { afterCursor: undefined }))).toEqual([2]);
    expect(thrown(() => store.query(A, 'all', { afterCursor: 0 })).code).toBe('replay_gap');
  });

  it('a page and its records are frozen', () => {
    const { store } = setup();
    store.appendObservability(A, observability('r1'));
    const page = store.query(A, 'all');
    expect(Object.isFrozen(page)).toBe(true);
    expect(Object.isFrozen(page.events)).toBe(true);
    expect(Object.isFrozen(page.events[0])).toBe(true);
  });

  it.each<[unknown, string]>([
    [5, 'selector'],
    [null, 'selector'],
    [undefined, 'selector'],
    ['ALL', 'selector'],
    ['', 'selector'],
    [[], 'selector'],
    [[['run_id', 'r1']], 'selector'],
    [{}, 'selector'],
    [{ payload: 'x' }, 'selector'],
    [{ run_id: 'r1', Run_Id: 'r1' }, 'selector'],
    [new Proxy({ run_id: 'r1' }, {}), 'selector'],
    [new Map([['run_id', 'r1']]), 'selector'],
    [{ run_id: '' }, 'run_id'],
    [{ run_id: 5 }, 'run_id'],
    [{ trace_id: ['a'] }, 'trace_id'],
    [{ workflow_id: 'x'.repeat(513) }, 'workflow_id'],
    [{ invocation_id: undefined }, 'invocation_id'],
    [{ run_id: 'lone\uD800' }, 'run_id'],
    [{ run_id: 'ok', invocation_id: null }, 'invocation_id'],
    [Object.defineProperty({}, 'run_id', { get: () => 'r1', enumerable: true }), 'run_id'],
  ])('selector %p is invalid_trace_selector {field: %s}', (selector, field) => {
    const { store } = setup();
    const error = thrown(() => store.query(A, selector as TraceSelector));
    expect(error.code).toBe('invalid_trace_selector');
    expect(error.details).toEqual({ field });
  });

  it('selector values of 512 bytes are accepted', () => {
    const { store } = setup();
    expect(store.query(A, { run_id: 'é'.repeat(256) }).events).toEqual([]);
  });

  it.each<[unknown, string]>([
    [{ afterCursor: -1 }, 'afterCursor'],
    [{ afterCursor: 1.5 }, 'afterCursor'],
    [{ afterCursor: '1' }, 'afterCursor'],
    [{ afterCursor: null }, 'afterCursor'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 11 }, 'limit'],
    [{ maxBytes: 1023 }, 'maxBytes'],
    [{ maxBytes: 4097 }, 'maxBytes'],
    [{ cursor: 1 }, 'cursor'],
    [{ after_cursor: 1 }, 'after_cursor'],
    [{ limit: 0, afterCursor: -1 }, 'afterCursor'],
  ])('query options %p are invalid_trace_query_options {field: %s}', (options, field) => {
    const { store } = setup({ maxEvents: 10, maxEventBytes: 1024, maxBytes: 8192, maxQueryBytes: 4096 });
    const error = thrown(() => store.query(A, 'all', options as TraceQueryOptions));
    expect(error.code).toBe('invalid_trace_query_options');
    expect(error.details).toEqual({ field });
  });

  it('options that are not an object at all are invalid_trace_store_request', () => {
    const { store } = setup();
    for (const options of [5, 'x', null, [], new Proxy({}, {})]) {
      const error = thrown(() => store.query(A, 'all', options as never));
      expect(error.code).toBe('invalid_trace_store_request');
      expect(error.details).toEqual({});
    }
  });

  it('bounds of limit and maxBytes are inclusive; defaults are maxQueryEvents and maxQueryBytes', () => {
    const { store } = setup({ maxEvents: 10, maxQueryEvents: 3, maxEventBytes: 1024, maxBytes: 8192, maxQueryBytes: 4096 });
    for (let i = 0; i < 5; i++) store.appendObservability(A, observability('r1'));
    expect(store.query(A, 'all').events).toHaveLength(3);
    expect(store.query(A, 'all', { limit: 1, maxBytes: 1024 }).events).toHaveLength(1);
    expect(store.query(A, 'all', { limit: 3, maxBytes: 4096 }).events).toHaveLength(3);
  });
});

describe('§8 Status', () => {
  it('status() of a new store: zeros, null oldest, latest 0, schema_version 1, frozen', () => {
    const { store } = setup();
    const status = store.status();
    expect(status).toEqual({
      schema_version: 1,
      events: 0,
      encoded_bytes: 0,
      principals: 0,
      streams: 0,
      lifecycle_receivers: 0,
      lifecycle_active_owners: 0,
      lifecycle_pending: 0,
      oldest_cursor: null,
      latest_cursor: 0,
      limits: expect.any(Object),
      counters: {
        accepted: 0,
        rejected: 0,
        content_rejected: 0,
        oversized_rejected: 0,
        capacity_evictions: 0,
        retention_evictions: 0,
        tombstones_pruned: 0,
        lifecycle_capability_rejected: 0,
        lifecycle_receivers_pruned: 0,
        lifecycle_delivery_dropped: 0,
      },
    });
    expect(Object.isFrozen(status)).toBe(true);
    expect(Object.isFrozen(status.counters)).toBe(true);
    expect(Object.isFrozen(status.limits)).toBe(true);
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });

  it('totals follow appends and evictions', () => {
    const { store } = setup({ maxEventsPerPrincipal: 2 });
    store.appendObservability(A, observability('r1'));
    store.appendObservability(A, observability('r2'));
    store.appendObservability(A, observability('r3'));
    store.appendObservability(B, observability('r1'));
    store.lifecycleReceiver(B);
    const status = store.status();
    const retained = [...store.query(A, 'all').events, ...store.query(B, 'all').events];
    expect(status).toMatchObject({
      events: 3,
      encoded_bytes: retained.reduce((sum, r) => sum + sizeOf(r), 0),
      principals: 2,
      // A: all, r1 (tombstone), r2, r3; B: all, r1
      streams: 6,
      lifecycle_receivers: 1,
      oldest_cursor: 2,
      latest_cursor: 4,
    });
    expect(status.counters).toMatchObject({ accepted: 4, capacity_evictions: 1 });
  });

  it('principalStatus(principal): its own totals; unknown reads as zeros and null', () => {
    const { store } = setup({ maxEventsPerPrincipal: 2 });
    for (let i = 0; i < 3; i++) store.appendObservability(A, observability('r1'));
    store.appendObservability(B, observability('r1'));
    const a = store.principalStatus(A);
    expect(a).toEqual({
      schema_version: 1,
      events: 2,
      encoded_bytes: store.query(A, 'all').encoded_bytes,
      oldest_cursor: 2,
      latest_cursor: 3,
    });
    expect(Object.isFrozen(a)).toBe(true);
    expect(store.principalStatus('nobody')).toEqual({ schema_version: 1, events: 0, encoded_bytes: 0, oldest_cursor: null, latest_cursor: 0 });
  });
});

describe('§10 Errors', () => {
  it('every error is a TraceStoreError with a code, details and a message free of input', () => {
    const { store } = setup({ maxPrincipals: 1, maxEventsPerPrincipal: 1, maxEventBytes: 1024 });
    store.appendObservability(A, observability('r1'));
    store.appendObservability(A, observability('r1'));
    const errors = [
      thrown(() => store.appendObservability('', {})),
      thrown(() => store.appendObservability(B, observability('r1'))),
      thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 0 })),
      thrown(() => store.query(A, { run_id: 'r1' }, { afterCursor: 9 })),
      thrown(() => store.query(A, { run_id: 5 as never })),
      thrown(() => store.query(A, 'all', { limit: -1 })),
    ];
    expect(errors.map((e) => e.code)).toEqual([
      'invalid_trace_principal',
      'trace_principal_capacity_reached',
      'replay_gap',
      'cursor_ahead',
      'invalid_trace_selector',
      'invalid_trace_query_options',
    ]);
    for (const error of errors) {
      expect(TraceStoreError.isTraceStoreError(error)).toBe(true);
      expect(error.name).toBe('TraceStoreError');
      expect(Object.isFrozen(error.details)).toBe(true);
    }
  });
});

describe('Canary: nothing raw leaves the store', () => {
  it('status, principalStatus, pages of others, errors and inspect carry no principal, digest or content', async () => {
    const principal = 'canary-principal-7f3a';
    const secret = 'canary-content-91bd';
    const { store } = setup({ maxPrincipals: 1, maxEventsPerPrincipal: 1, contentPolicy: 'reject' });
    store.appendObservability(principal, observability('canary-run-1', { agent: 'helper' }));
    store.appendObservability(principal, observability('canary-run-1'));
    const receiver = store.lifecycleReceiver(principal);
    receiver.deliver('observability', { ...observability('canary-run-1'), prompt: secret });
    receiver.deliver('observability', { event: `${secret} !`, timestamp_ms: 1, metadata: { run_id: 'canary-run-1' } });
    await new Promise((resolve) => setImmediate(resolve));
    const errors = [
      thrown(() => store.appendObservability(principal, { ...observability('canary-run-1'), prompt: secret })),
      thrown(() => store.appendObservability(principal, { event: `${secret} !`, timestamp_ms: 1, metadata: { run_id: 'r' } })),
      thrown(() => store.appendObservability(principal, { [secret]: 1, event: 'x', timestamp_ms: 1, metadata: { run_id: 'r' } })),
      thrown(() => store.appendObservability(`${principal}-2`, observability('r1'))),
      thrown(() => store.appendObservability(`${principal}${'x'.repeat(300)}`, observability('r1'))),
      thrown(() => store.query(principal, { run_id: 'canary-run-1' }, { afterCursor: 0 })),
      thrown(() => store.query(principal, { run_id: secret, [secret]: 1 } as never)),
      thrown(() => store.query(principal, { run_id: 'canary-run-1' }, { [secret]: 1 } as never)),
      thrown(() => store.query(principal, { run_id: 'canary-run-1' }, { afterCursor: 99 })),
    ];
    const digest = sha256Hex(principal);
    const texts = [
      JSON.stringify(store.status()),
      JSON.stringify(store.prune()),
      JSON.stringify(store.principalStatus(principal)),
      JSON.stringify(store),
      inspect(store, { showHidden: true, depth: 10 }),
      JSON.stringify(receiver),
      inspect(receiver, { showHidden: true, depth: 10 }),
      ...errors.flatMap((error) => [error.message, JSON.stringify(error.details ?? {}), inspect(error), error.stack ?? '']),
    ];
    for (const text of texts) {
      for (const raw of [principal, digest, secret, 'canary-run']) expect(text).not.toContain(raw);
    }
    expect(store.status().counters.content_rejected).toBe(3);
  });
});

/**
 * Property-based tests of the scope router (spec 07 §9), with fast-check.
 *
 * Leases: random resolves (with no signal, a fresh one, a shared one, an aborted one), releases
 * (once or twice), borrower aborts, worker operations and clock moves, under either routing; after
 * every step each lease's `held` and each worker's `leaseCount` equal the model built from what the
 * caller did, and `release()` is true exactly when the model still counts the lease.
 *
 * Capacity: random run/resolve calls over 5 scopes against stalled creations and operations that the
 * test settles (or fails), caller aborts, timeouts by clock moves and lease releases. At every instant
 * — after each step and inside openScope, operations and signal listeners — `active_scopes ≤
 * maxActiveScopes` and `cold_routes_in_flight ≤ maxRouterQueue`; `scope_router_overloaded` only
 * when the queue was full. Once everything is settled and released, `cold_routes_in_flight` is 0,
 * no timer is left, every lease count is 0, and `active_scopes` equals the workers that were handed
 * to a caller minus the evictions: no worker of a failed or abandoned creation stayed installed.
 */
import fc from 'fast-check';
import type { ScopeLease } from './scope-lease';
import type { ScopeWorkerHandle } from './scope-worker-handle';
import type { MemoryScope } from '../services.types';
import { deferred, flush, keyOf, routerFixture, scope, type Deferred } from './testing/router-fixture';

const USERS = ['u0', 'u1', 'u2', 'u3', 'u4'];

// ---- leases ------------------------------------------------------------------------------------

type SignalSpec = 'none' | 'new' | 'aborted' | { shared: number };
type LeaseCmd =
  | { t: 'resolve'; user: number; signal: SignalSpec }
  | { t: 'release'; lease: number; twice: boolean }
  | { t: 'abort'; signal: number }
  | { t: 'workerRun'; lease: number }
  | { t: 'advance'; ms: number };

const signalSpec: fc.Arbitrary<SignalSpec> = fc.oneof(
  fc.constantFrom<SignalSpec>('none', 'new', 'aborted'),
  fc.record({ shared: fc.nat(3) }),
);

const leaseCmd: fc.Arbitrary<LeaseCmd> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant('resolve' as const), user: fc.nat(2), signal: signalSpec }), weight: 4 },
  { arbitrary: fc.record({ t: fc.constant('release' as const), lease: fc.nat(30), twice: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('abort' as const), signal: fc.nat(30) }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('workerRun' as const), lease: fc.nat(30) }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }), weight: 1 },
);

interface ModelLease {
  readonly lease: ScopeLease;
  readonly worker: ScopeWorkerHandle<MemoryScope>;
  readonly signal: number | null;
  counted: boolean;
}

describe('scope router leases (spec 07 §9)', () => {
  it('a lease count equals the unreleased leases and each lease decrements it once, whatever mix of release and abort', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('shared' as const, 'exact_scope' as const),
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        fc.array(leaseCmd, { minLength: 1, maxLength: 40, size: 'medium' }),
        fc.boolean(),
        async (routing, durable, maxActiveScopes, cmds, stopAtEnd) => {
          const { router, clock } = routerFixture({ routing, durable, maxActiveScopes, idleScopeTimeoutMs: 10 });
          await router.start();
          const signals: AbortController[] = [];
          const leases: ModelLease[] = [];
          const workers = new Map<number, ScopeWorkerHandle<MemoryScope>>();

          const check = () => {
            for (const entry of leases) expect(entry.lease.held).toBe(entry.counted);
            for (const [incarnation, worker] of workers) {
              const counted = leases.filter((entry) => entry.counted && entry.lease.incarnation === incarnation).length;
              expect(worker.leaseCount).toBe(counted);
            }
          };
          const abortSignal = (index: number) => {
            const controller = signals[index];
            if (controller === undefined || controller.signal.aborted) return;
            controller.abort();
            for (const entry of leases) if (entry.signal === index) entry.counted = false;
          };

          for (const cmd of cmds) {
            if (cmd.t === 'resolve') {
              let signalIndex: number | null = null;
              if (cmd.signal === 'new' || cmd.signal === 'aborted') {
                signalIndex = signals.push(new AbortController()) - 1;
                if (cmd.signal === 'aborted') signals[signalIndex].abort();
              } else if (cmd.signal !== 'none' && cmd.signal.shared < signals.length) {
                signalIndex = cmd.signal.shared;
              }
              const signal = signalIndex === null ? undefined : signals[signalIndex].signal;
              const result = await router.resolve(scope(USERS[cmd.user]), { signal }).then(
                (value) => value,
                (error: { code: string }) => error.code,
              );
              if (typeof result === 'string') {
                if (signal?.aborted) expect(result).toBe('scope_route_caller_unavailable');
                else expect(result).toBe('max_active_scopes_reached');
              } else {
                expect(signal?.aborted ?? false).toBe(false);
                leases.push({ lease: result.lease, worker: result.worker, signal: signalIndex, counted: true });
                workers.set(result.worker.incarnation, result.worker);
              }
            } else if (cmd.t === 'release') {
              const entry = leases[cmd.lease];
              if (entry !== undefined) {
                expect(entry.lease.release()).toBe(entry.counted);
                entry.counted = false;
                if (cmd.twice) expect(entry.lease.release()).toBe(false);
              }
            } else if (cmd.t === 'abort') {
              abortSignal(cmd.signal);
            } else if (cmd.t === 'workerRun') {
              const entry = leases[cmd.lease];
              if (entry !== undefined) {
                const counted = entry.counted;
                const result = await entry.worker.run((s) => Promise.resolve(s.userId), { timeoutMs: 1000 }).catch((error: { code: string }) => error.code);
                expect(result === 'scope_route_caller_unavailable').toBe(!counted);
              }
            } else {
              clock.advance(cmd.ms);
            }
            await flush();
            check();
          }
          if (stopAtEnd) {
            await router.stop();
            for (const entry of leases) entry.counted = false;
            check();
            for (const entry of leases) expect(entry.lease.release()).toBe(false);
          } else {
            for (const entry of leases) {
              expect(entry.lease.release()).toBe(entry.counted);
              entry.counted = false;
            }
            check();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

// ---- capacity ----------------------------------------------------------------------------------

type CapacityCmd =
  | { t: 'call'; user: number; mode: 'run' | 'resolve'; signal: boolean; timeoutMs: number | undefined; stallOperation: boolean }
  | { t: 'settleOpen'; index: number; ok: boolean }
  | { t: 'settleOperation'; index: number; ok: boolean }
  | { t: 'abort'; call: number }
  | { t: 'release'; lease: number }
  | { t: 'advance'; ms: number }
  | { t: 'stallOpens'; on: boolean };

const capacityCmd: fc.Arbitrary<CapacityCmd> = fc.oneof(
  {
    arbitrary: fc.record({
      t: fc.constant('call' as const),
      user: fc.nat(USERS.length - 1),
      mode: fc.constantFrom('run' as const, 'resolve' as const),
      signal: fc.boolean(),
      timeoutMs: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
      stallOperation: fc.boolean(),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ t: fc.constant('settleOpen' as const), index: fc.nat(20), ok: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('settleOperation' as const), index: fc.nat(20), ok: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('abort' as const), call: fc.nat(40) }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('release' as const), lease: fc.nat(20) }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('stallOpens' as const), on: fc.boolean() }), weight: 1 },
);

const ALLOWED = new Set(['ok', 'scope_router_overloaded', 'max_active_scopes_reached', 'timeout', 'scope_route_caller_unavailable', 'memory_shard_adapter_failed']);

describe('scope router capacity (spec 07 §9)', () => {
  it('active_scopes and cold_routes_in_flight stay within bounds at every instant and return to resting values', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 5, max: 20 }),
        fc.array(capacityCmd, { minLength: 1, maxLength: 60, size: 'medium' }),
        async (durable, maxActiveScopes, maxRouterQueue, idleScopeTimeoutMs, cmds) => {
          const fixture = routerFixture({ durable, maxActiveScopes, maxRouterQueue, idleScopeTimeoutMs, callTimeoutMs: 40 });
          const { router, clock, opens, control } = fixture;
          await router.start();
          control.stallOpens = true;

          const checkBounds = () => {
            const status = router.status();
            expect(status.active_scopes).toBeGreaterThanOrEqual(0);
            expect(status.active_scopes).toBeLessThanOrEqual(maxActiveScopes);
            expect(status.cold_routes_in_flight).toBeGreaterThanOrEqual(0);
            expect(status.cold_routes_in_flight).toBeLessThanOrEqual(maxRouterQueue);
          };

          /** The latest openScope of each key: the creation whose worker a call on that key is handed. */
          const latestOpen = new Map<string, number>();
          const handed = new Set<number>();
          const settledOpens = new Set<number>();
          const operations: Array<{ result: Deferred<string>; done: boolean }> = [];
          const calls: Array<{ controller: AbortController; outcome: string }> = [];
          const leases: Array<{ lease: ScopeLease; worker: ScopeWorkerHandle<MemoryScope> }> = [];
          const originalOpen = fixture.opens.push.bind(fixture.opens);
          fixture.opens.push = (...items) => {
            checkBounds();
            for (const item of items) latestOpen.set(item.key, opens.length);
            return originalOpen(...items);
          };

          const operationFor = (stall: boolean) => (s: MemoryScope, call: { signal: AbortSignal; timeoutMs: number }) => {
            checkBounds();
            expect(call.timeoutMs).toBeGreaterThanOrEqual(1);
            handed.add(latestOpen.get(keyOf(s.userId)) as number);
            call.signal.addEventListener('abort', checkBounds);
            if (!stall) return Promise.resolve('ok');
            const entry = { result: deferred<string>(), done: false };
            operations.push(entry);
            return entry.result.promise;
          };

          for (const cmd of cmds) {
            if (cmd.t === 'call') {
              const controller = new AbortController();
              controller.signal.addEventListener('abort', checkBounds);
              const record = { controller, outcome: 'pending' };
              calls.push(record);
              const coldBefore = router.status().cold_routes_in_flight;
              const options = { signal: cmd.signal ? controller.signal : undefined, timeoutMs: cmd.timeoutMs };
              const user = USERS[cmd.user];
              const promise =
                cmd.mode === 'run'
                  ? router.run(scope(user), operationFor(cmd.stallOperation), options)
                  : router.resolve(scope(user), options).then((resolved) => {
                      handed.add(latestOpen.get(keyOf(user)) as number);
                      leases.push(resolved);
                      return 'ok';
                    });
              checkBounds();
              promise.then(
                () => (record.outcome = 'ok'),
                (error: { code: string }) => {
                  record.outcome = error.code;
                  if (error.code === 'scope_router_overloaded') expect(coldBefore).toBe(maxRouterQueue);
                },
              );
            } else if (cmd.t === 'settleOpen') {
              const pending = opens.map((_, i) => i).filter((i) => !settledOpens.has(i));
              const index = pending[cmd.index % Math.max(1, pending.length)];
              if (index !== undefined) {
                settledOpens.add(index);
                if (cmd.ok) opens[index].gate.resolve();
                else opens[index].gate.reject(new Error('open failed'));
              }
            } else if (cmd.t === 'settleOperation') {
              const pending = operations.filter((entry) => !entry.done);
              const entry = pending[cmd.index % Math.max(1, pending.length)];
              if (entry !== undefined) {
                entry.done = true;
                if (cmd.ok) entry.result.resolve('ok');
                else entry.result.reject(new Error('operation failed'));
              }
            } else if (cmd.t === 'abort') {
              calls[cmd.call]?.controller.abort();
            } else if (cmd.t === 'release') {
              leases[cmd.lease]?.lease.release();
            } else if (cmd.t === 'advance') {
              clock.advance(cmd.ms);
            } else {
              control.stallOpens = cmd.on;
            }
            await flush();
            checkBounds();
          }

          // everyone leaves: creations and operations finish, leases are released, deadlines pass
          control.stallOpens = false;
          for (let round = 0; round < 10; round++) {
            opens.forEach((open, i) => {
              if (!settledOpens.has(i)) {
                settledOpens.add(i);
                open.gate.resolve();
              }
            });
            for (const entry of operations) {
              if (!entry.done) {
                entry.done = true;
                entry.result.resolve('ok');
              }
            }
            clock.advance(100);
            await flush();
            for (const { lease } of leases) lease.release();
          }
          await flush();
          checkBounds();
          for (const record of calls) expect(ALLOWED).toContain(record.outcome);
          for (const { worker } of leases) expect(worker.leaseCount).toBe(0);
          const status = router.status();
          expect(status.cold_routes_in_flight).toBe(0);
          expect(status.active_scopes).toBe(handed.size - status.idle_evictions);
          if (!durable) expect(status.idle_evictions).toBe(0);
          expect(clock.pendingTimers).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

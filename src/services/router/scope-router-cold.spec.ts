import { answer, flush, outcome, routerFixture, scope, startedRouter, TimerlessClock } from './testing/router-fixture';
import { RuntimeServiceError } from '../runtime-service.errors';



describe('ScopeRouter — cold route admission (spec 07 §4 step 1)', () => {
  it('of 12 simultaneous cold scopes behind a stalled creation refuses exactly 10 at once; the other 2 succeed once resumed', async () => {
    const { router, control, opens } = await startedRouter({ maxRouterQueue: 2, maxActiveScopes: 16 });
    control.stallOpens = true;
    const calls = Array.from({ length: 12 }, (_, i) => router.run(scope(`user-${i}`), answer(i)));
    const states = await Promise.all(calls.map((call) => outcome(call)));
    expect(states.filter((state) => state === 'scope_router_overloaded')).toHaveLength(10);
    expect(states.filter((state) => state === 'pending')).toHaveLength(2);
    expect(router.status()).toMatchObject({ cold_routes_in_flight: 2, active_scopes: 2 });
    expect(opens).toHaveLength(2);
    for (const open of opens) open.gate.resolve();
    const settled = await Promise.allSettled(calls);
    expect(settled.filter((result) => result.status === 'fulfilled').map((result) => (result as PromiseFulfilledResult<number>).value)).toEqual([0, 1]);
    expect(router.status()).toMatchObject({ cold_routes_in_flight: 0, active_scopes: 2 });
  });

  it('refuses with scope_router_overloaded before checking the deadline, the signal or the scope', async () => {
    const { router, control } = await startedRouter({ maxRouterQueue: 1 });
    control.stallOpens = true;
    const holder = router.run(scope('holder'), answer(1));
    const aborted = new AbortController();
    aborted.abort();
    await expect(router.run({ appName: '' }, answer(1))).rejects.toMatchObject({ code: 'scope_router_overloaded', details: { limit: 1 } });
    await expect(router.run(scope('x'), answer(1), { signal: aborted.signal })).rejects.toMatchObject({ code: 'scope_router_overloaded' });
    await expect(router.run(scope('x'), answer(1), { timeoutMs: 0 })).rejects.toMatchObject({ code: 'scope_router_overloaded' });
    expect(await outcome(holder)).toBe('pending');
  });

  it('checks the deadline, then the signal, then the scope once admitted', async () => {
    const { router, opens } = await startedRouter();
    const aborted = new AbortController();
    aborted.abort();
    await expect(router.run({ appName: 'app' }, answer(1), { timeoutMs: 0, signal: aborted.signal })).rejects.toMatchObject({ code: 'timeout' });
    await expect(router.run({ appName: 'app' }, answer(1), { signal: aborted.signal })).rejects.toMatchObject({ code: 'scope_route_caller_unavailable' });
    const invalid = await router.run({ appName: 'app', userId: 'a\u0000b' }, answer(1)).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(RuntimeServiceError);
    expect(invalid).toMatchObject({ code: 'invalid_memory_scope' });
    expect(opens).toHaveLength(0);
    expect(router.status()).toMatchObject({ cold_routes_in_flight: 0, active_scopes: 0 });
  });

  it('returns the permit exactly once on every path', async () => {
    const { router, control, opens, clock } = await startedRouter({ maxRouterQueue: 3 });
    control.stallOpens = true;
    const timedOut = router.run(scope('t'), answer(1), { timeoutMs: 10 });
    const caller = new AbortController();
    const aborted = router.run(scope('a'), answer(1), { signal: caller.signal });
    const failing = router.run(scope('f'), answer(1));
    await flush();
    expect(router.status().cold_routes_in_flight).toBe(3);
    clock.advance(10);
    caller.abort();
    opens[2].gate.reject(new Error('nope'));
    expect(await Promise.all([outcome(timedOut), outcome(aborted), outcome(failing)])).toEqual(['timeout', 'scope_route_caller_unavailable', 'memory_shard_adapter_failed']);
    expect(router.status().cold_routes_in_flight).toBe(0);
    opens[0].gate.resolve();
    opens[1].gate.resolve();
    await flush();
    expect(router.status()).toMatchObject({ cold_routes_in_flight: 0, active_scopes: 0 });
    const ok = await Promise.all([router.run(scope('x'), answer(1)), router.run(scope('y'), answer(2)), router.run(scope('z'), answer(3))].map(outcome));
    expect(ok).toEqual(['pending', 'pending', 'pending']);
    for (const open of opens.slice(3)) open.gate.resolve();
    await flush();
    expect(router.status().cold_routes_in_flight).toBe(0);
  });
});

describe('ScopeRouter — one absolute deadline (step 2)', () => {
  it('fixes the deadline at entry and carries it through creation into the operation', async () => {
    const { router, control, opens, clock } = await startedRouter();
    control.stallOpens = true;
    const seen: number[] = [];
    const result = router.run(scope('u1'), (_s, call) => (seen.push(call.timeoutMs), Promise.resolve('ok')), { timeoutMs: 300 });
    await flush();
    expect(opens[0].call.timeoutMs).toBe(300);
    clock.advance(299);
    expect(await outcome(result)).toBe('pending');
    opens[0].gate.resolve();
    await expect(result).resolves.toBe('ok');
    expect(seen).toEqual([1]);
  });

  it('times out a caller waiting on a stalled creation at exactly its deadline', async () => {
    const { router, control, clock } = await startedRouter({ callTimeoutMs: 200 });
    control.stallOpens = true;
    const result = router.run(scope('u1'), answer(1));
    await flush();
    clock.advance(199);
    expect(await outcome(result)).toBe('pending');
    clock.advance(1);
    expect(await outcome(result)).toBe('timeout');
  });
});

describe('ScopeRouter — resolution (step 4)', () => {
  it('joins a creation in progress for the same key (single flight)', async () => {
    const { router, control, opens, opensOf } = await startedRouter();
    control.stallOpens = true;
    const first = router.run(scope('u1'), answer('a'));
    const second = router.resolve(scope('u1'));
    await flush();
    expect(router.status()).toMatchObject({ active_scopes: 1, cold_routes_in_flight: 2 });
    opens[0].gate.resolve();
    await expect(first).resolves.toBe('a');
    const { lease } = await second;
    expect(opensOf('u1')).toBe(1);
    expect(lease.held).toBe(true);
    expect(router.status()).toMatchObject({ active_scopes: 1, cold_routes_in_flight: 0 });
  });

  it('fails every waiter of a failed creation with the adapter failure code and frees its slot', async () => {
    const { router, control, opens, opensOf } = await startedRouter({ maxActiveScopes: 1, durable: false });
    control.stallOpens = true;
    const first = router.run(scope('u1'), answer(1));
    const second = router.run(scope('u1'), answer(2));
    await flush();
    opens[0].gate.reject(new Error('password=hunter2'));
    for (const result of [first, second]) {
      const error = await result.catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'memory_shard_adapter_failed' });
      expect((error as Error).message).not.toContain('hunter2');
    }
    expect(router.status().active_scopes).toBe(0);
    control.stallOpens = false;
    await expect(router.run(scope('u2'), answer(3))).resolves.toBe(3);
    expect(opensOf('u1')).toBe(1);
  });

  it('treats an openScope that throws synchronously like one that rejects', async () => {
    const { router } = await startedRouter({
      openScope: () => {
        throw new Error('sync secret');
      },
    });
    await expect(router.run(scope('u1'), answer(1))).rejects.toMatchObject({ code: 'memory_shard_adapter_failed' });
    expect(router.status()).toMatchObject({ active_scopes: 0, cold_routes_in_flight: 0 });
  });

  it('passes a RuntimeServiceError of openScope unchanged', async () => {
    const refusal = new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: '57P01' });
    const { router } = await startedRouter({ openScope: () => Promise.reject(refusal) });
    await expect(router.run(scope('u1'), answer(1))).rejects.toBe(refusal);
    expect(router.status().active_scopes).toBe(0);
  });

  it('counts a creation in progress as an active scope: its reserved slot is never reclaimed', async () => {
    const { router, control, opens, clock } = await startedRouter({ maxActiveScopes: 1 });
    control.stallOpens = true;
    const first = router.run(scope('a'), answer('a'), { timeoutMs: 10_000 });
    await flush();
    clock.advance(1000);
    await expect(router.run(scope('b'), answer('b'))).rejects.toMatchObject({ code: 'max_active_scopes_reached' });
    expect(router.status()).toMatchObject({ active_scopes: 1, idle_evictions: 0 });
    opens[0].gate.resolve();
    await expect(first).resolves.toBe('a');
  });

  it('on a volatile adapter with max_active_scopes 1 refuses a second scope with max_active_scopes_reached, however long it idles', async () => {
    const { router, clock } = await startedRouter({ durable: false, maxActiveScopes: 1 });
    await expect(router.run(scope('a'), answer(1))).resolves.toBe(1);
    clock.advance(86_400_000);
    await expect(router.run(scope('b'), answer(2))).rejects.toMatchObject({ code: 'max_active_scopes_reached', details: { limit: 1 } });
    await expect(router.run(scope('a'), answer(3))).resolves.toBe(3);
    expect(router.status()).toMatchObject({ idle_reclamation: 'disabled_for_volatile_adapter', idle_evictions: 0, active_scopes: 1, cold_routes_in_flight: 0 });
  });
});

describe('ScopeRouter — idle reclamation (§4 capacity and reclamation)', () => {
  it('on a durable adapter with a 10 ms idle timeout serves A, B, A with at least 2 evictions', async () => {
    const { router, clock, opensOf } = await startedRouter({ maxActiveScopes: 1, idleScopeTimeoutMs: 10 });
    await expect(router.run(scope('a'), answer('a1'))).resolves.toBe('a1');
    clock.advance(10);
    await expect(router.run(scope('b'), answer('b'))).resolves.toBe('b');
    clock.advance(10);
    await expect(router.run(scope('a'), answer('a2'))).resolves.toBe('a2');
    expect(router.status()).toMatchObject({ idle_evictions: 2, active_scopes: 1, idle_reclamation: 'lru_on_capacity' });
    expect(opensOf('a')).toBe(2);
  });

  it('does not reclaim a worker used less than idleScopeTimeoutMs ago', async () => {
    const { router, clock } = await startedRouter({ maxActiveScopes: 1, idleScopeTimeoutMs: 10 });
    await router.run(scope('a'), answer(1));
    clock.advance(9);
    await expect(router.run(scope('b'), answer(2))).rejects.toMatchObject({ code: 'max_active_scopes_reached' });
    expect(router.status().idle_evictions).toBe(0);
  });

  it('never evicts a worker holding a lease', async () => {
    const { router, clock } = await startedRouter({ maxActiveScopes: 1, idleScopeTimeoutMs: 10 });
    const { worker, lease } = await router.resolve(scope('a'));
    clock.advance(1000);
    await expect(router.run(scope('b'), answer(2))).rejects.toMatchObject({ code: 'max_active_scopes_reached' });
    await expect(worker.run(answer('still mine'))).resolves.toBe('still mine');
    expect(lease.held).toBe(true);
    lease.release();
    clock.advance(10);
    await expect(router.run(scope('b'), answer(2))).resolves.toBe(2);
    expect(router.status().idle_evictions).toBe(1);
  });

  it('never evicts a worker with an operation still queued or running', async () => {
    const { router, clock } = await startedRouter({ maxActiveScopes: 1, idleScopeTimeoutMs: 10 });
    const { worker, lease } = await router.resolve(scope('a'));
    let finish!: () => void;
    const running = worker.run(() => new Promise<void>((resolve) => (finish = resolve)), { timeoutMs: 100_000 });
    await flush();
    lease.release();
    clock.advance(1000);
    await expect(router.run(scope('b'), answer(2))).rejects.toMatchObject({ code: 'max_active_scopes_reached' });
    finish();
    await running;
    clock.advance(10);
    await expect(router.run(scope('b'), answer(2))).resolves.toBe(2);
  });

  it('takes the least recently accessed eligible worker, one per cold start', async () => {
    const { router, clock, opensOf } = await startedRouter({ maxActiveScopes: 2, idleScopeTimeoutMs: 10 });
    await router.run(scope('a'), answer(1));
    clock.advance(1);
    await router.run(scope('b'), answer(2));
    clock.advance(1);
    await router.run(scope('a'), answer(3));
    clock.advance(20);
    await router.run(scope('c'), answer(4));
    expect(router.status()).toMatchObject({ idle_evictions: 1, active_scopes: 2 });
    await router.run(scope('a'), answer(5));
    expect(opensOf('a')).toBe(1);
    expect(opensOf('b')).toBe(1);
  });
});

describe('ScopeRouter — handoff (step 5)', () => {
  it('a caller that aborts during a stalled cold route leaves no lease and no stale worker', async () => {
    const { router, control, opens, opensOf } = await startedRouter();
    control.stallOpens = true;
    const caller = new AbortController();
    const result = router.resolve(scope('u1'), { signal: caller.signal });
    await flush();
    expect(router.status()).toMatchObject({ active_scopes: 1, cold_routes_in_flight: 1 });
    caller.abort();
    expect(await outcome(result)).toBe('scope_route_caller_unavailable');
    expect(router.status()).toMatchObject({ cold_routes_in_flight: 0 });
    expect(opens[0].call.signal.aborted).toBe(true);
    opens[0].gate.resolve();
    await flush();
    expect(router.status()).toMatchObject({ active_scopes: 0, cold_routes_in_flight: 0 });
    control.stallOpens = false;
    const { worker, lease } = await router.resolve(scope('u1'));
    expect(opensOf('u1')).toBe(2);
    expect(worker.leaseCount).toBe(1);
    lease.release();
  });

  it('a caller that times out during a stalled cold route leaves no lease and no stale worker', async () => {
    const { router, control, opens, clock, opensOf } = await startedRouter();
    await router.run(scope('other'), answer(0));
    control.stallOpens = true;
    const result = router.run(scope('u1'), answer(1), { timeoutMs: 25 });
    await flush();
    expect(router.status()).toMatchObject({ active_scopes: 2, cold_routes_in_flight: 1 });
    clock.advance(25);
    expect(await outcome(result)).toBe('timeout');
    expect(router.status()).toMatchObject({ cold_routes_in_flight: 0 });
    opens[1].gate.resolve();
    await flush();
    expect(router.status()).toMatchObject({ active_scopes: 1, cold_routes_in_flight: 0 });
    control.stallOpens = false;
    await router.run(scope('u1'), answer(1));
    expect(opensOf('u1')).toBe(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it('rechecks the deadline at handoff: a creation finishing after the deadline hands nothing over', async () => {
    const clock = new TimerlessClock();
    const { router, control, opens } = await startedRouter({ clock });
    control.stallOpens = true;
    const late = router.run(scope('u1'), answer(1), { timeoutMs: 5 });
    await flush();
    clock.advance(5);
    opens[0].gate.resolve();
    expect(await outcome(late)).toBe('timeout');
    expect(router.status()).toMatchObject({ active_scopes: 0, cold_routes_in_flight: 0 });
  });

  it('hands the worker to a joiner still waiting after the creator left', async () => {
    const { router, control, opens } = await startedRouter();
    control.stallOpens = true;
    const creator = new AbortController();
    const first = router.run(scope('u1'), answer(1), { signal: creator.signal });
    const joiner = router.run(scope('u1'), answer(2));
    await flush();
    creator.abort();
    expect(await outcome(first)).toBe('scope_route_caller_unavailable');
    expect(opens[0].call.signal.aborted).toBe(false);
    opens[0].gate.resolve();
    await expect(joiner).resolves.toBe(2);
    expect(router.status()).toMatchObject({ active_scopes: 1, cold_routes_in_flight: 0 });
  });

  it('re-resolves a caller that joined an abandoned creation when it then fails', async () => {
    const { router, control, opens, opensOf } = await startedRouter();
    control.stallOpens = true;
    const creator = new AbortController();
    const first = router.run(scope('u1'), answer(1), { signal: creator.signal });
    await flush();
    creator.abort();
    expect(await outcome(first)).toBe('scope_route_caller_unavailable');
    const follower = router.run(scope('u1'), answer(2));
    await flush();
    expect(router.status().active_scopes).toBe(1);
    opens[0].gate.reject(new Error('aborted by signal'));
    await flush();
    expect(opensOf('u1')).toBe(2);
    opens[1].gate.resolve();
    await expect(follower).resolves.toBe(2);
    expect(router.status()).toMatchObject({ active_scopes: 1, cold_routes_in_flight: 0 });
  });
});

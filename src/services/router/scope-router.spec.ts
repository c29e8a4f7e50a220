import { inspect } from 'node:util';
import { answer, flush, keyOf, outcome, routerFixture, scope, stalledOperation, startedRouter, TimerlessClock } from './testing/router-fixture';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkArtifactScope, scopeKey } from '../service-scope';
import type { ArtifactScope } from '../services.types';
import { ScopeRouter } from './scope-router';
import { SHARED_SCOPE_KEY } from './router-options';



describe('ScopeRouter — workers (spec 07 §4)', () => {
  it('reuses one worker for the same scope', async () => {
    const { router, opensOf } = await startedRouter();
    await expect(router.run(scope('u1'), answer(1))).resolves.toBe(1);
    await expect(router.run(scope('u1'), answer(2))).resolves.toBe(2);
    const first = await router.resolve(scope('u1'));
    const second = await router.resolve(scope('u1'));
    expect(first.worker.incarnation).toBe(second.worker.incarnation);
    expect(opensOf('u1')).toBe(1);
    expect(router.status().active_scopes).toBe(1);
  });

  it('runs the operations of one scope one at a time in arrival order', async () => {
    const { router } = await startedRouter();
    const stalled = stalledOperation();
    const results = [router.run(scope('u1'), stalled.operation), router.run(scope('u1'), stalled.operation), router.run(scope('u1'), stalled.operation)];
    await flush();
    expect(stalled.calls).toHaveLength(1);
    stalled.calls[0].result.resolve('first');
    await flush();
    expect(stalled.calls).toHaveLength(2);
    stalled.calls[1].result.reject(new Error('boom'));
    await flush();
    expect(stalled.calls).toHaveLength(3);
    stalled.calls[2].result.resolve('third');
    await expect(results[0]).resolves.toBe('first');
    await expect(results[1]).rejects.toMatchObject({ code: 'memory_shard_adapter_failed' });
    await expect(results[2]).resolves.toBe('third');
  });

  it('runs operations of different scopes concurrently', async () => {
    const { router } = await startedRouter();
    const stalled = stalledOperation();
    const a = router.run(scope('a'), stalled.operation);
    const b = router.run(scope('b'), stalled.operation);
    await flush();
    expect(stalled.calls.map((call) => call.scope.userId)).toEqual(['a', 'b']);
    stalled.calls[1].result.resolve('b');
    await expect(b).resolves.toBe('b');
    stalled.calls[0].result.resolve('a');
    await expect(a).resolves.toBe('a');
  });

  it('under shared routing creates the one worker at start and routes every scope to it, one at a time', async () => {
    const fixture = routerFixture({ routing: 'shared', durable: false, maxActiveScopes: 1024 });
    const { router, opens } = fixture;
    expect(router.status()).toMatchObject({ status: 'starting', active_scopes: 0 });
    await router.start();
    expect(opens.map((open) => open.key)).toEqual([SHARED_SCOPE_KEY]);
    expect(router.start()).toBe(router.start());
    const stalled = stalledOperation();
    const a = router.run(scope('a'), stalled.operation);
    const b = router.run(scope('b'), stalled.operation);
    await flush();
    expect(stalled.calls.map((call) => call.scope.userId)).toEqual(['a']);
    stalled.calls[0].result.resolve('a');
    await flush();
    expect(stalled.calls.map((call) => call.scope.userId)).toEqual(['a', 'b']);
    stalled.calls[1].result.resolve('b');
    await expect(Promise.all([a, b])).resolves.toEqual(['a', 'b']);
    expect(opens).toHaveLength(1);
    expect(router.status()).toMatchObject({
      active_scopes: 1,
      max_active_scopes: 1,
      routing: 'shared',
      global_quota: true,
      idle_reclamation: 'not_required_shared_adapter',
    });
  });

  it('fails start under shared routing when the worker cannot start, without the adapter text', async () => {
    const { router } = routerFixture({ routing: 'shared', openScope: () => Promise.reject(new Error('disk on fire')) });
    const error = await router.start().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'memory_shard_adapter_failed' });
    expect(String((error as Error).message)).not.toContain('fire');
    expect(router.status()).toMatchObject({ status: 'stopped', active_scopes: 0 });
    await expect(router.run(scope('a'), answer(1))).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
  });
});

describe('ScopeRouter — warm path', () => {
  it('completes a warm call while cold routes are stalled and the router queue is full', async () => {
    const { router, control } = await startedRouter({ maxRouterQueue: 2 });
    await router.run(scope('warm'), answer('ready'));
    control.stallOpens = true;
    const cold = [router.run(scope('c1'), answer(1)), router.run(scope('c2'), answer(2))];
    await flush();
    expect(router.status().cold_routes_in_flight).toBe(2);
    await expect(router.run(scope('c3'), answer(3))).rejects.toMatchObject({ code: 'scope_router_overloaded' });
    await expect(router.run(scope('warm'), answer('still warm'))).resolves.toBe('still warm');
    const held = await router.resolve(scope('warm'));
    expect(held.lease.held).toBe(true);
    expect(router.status().cold_routes_in_flight).toBe(2);
    expect(await outcome(Promise.all(cold))).toBe('pending');
    held.lease.release();
  });

  it('refuses a warm call whose signal already aborted or that has no time, without queueing it', async () => {
    const { router } = await startedRouter();
    await router.run(scope('u1'), answer(0));
    const op = jest.fn(answer(1));
    const controller = new AbortController();
    controller.abort();
    await expect(router.run(scope('u1'), op, { signal: controller.signal })).rejects.toMatchObject({ code: 'scope_route_caller_unavailable' });
    await expect(router.run(scope('u1'), op, { timeoutMs: 0 })).rejects.toMatchObject({ code: 'timeout' });
    expect(op).not.toHaveBeenCalled();
  });
});

describe('ScopeRouter — per operation', () => {
  it('passes the remaining time (≥ 1 ms) and a signal that aborts when the call times out', async () => {
    const { router, clock, control, opens } = await startedRouter();
    control.stallOpens = true;
    const stalled = stalledOperation();
    const result = router.run(scope('u1'), stalled.operation, { timeoutMs: 500 });
    await flush();
    clock.advance(120);
    opens[0].gate.resolve();
    await flush();
    expect(opens[0].call.timeoutMs).toBe(500);
    const call = stalled.calls[0].call;
    expect(call.timeoutMs).toBe(380);
    expect(call.signal.aborted).toBe(false);
    clock.advance(380);
    await expect(result).rejects.toMatchObject({ code: 'timeout' });
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toMatchObject({ code: 'timeout' });
  });

  it('gives a queued operation whose time ran out `timeout` without calling it', async () => {
    const { router, clock } = await startedRouter();
    const stalled = stalledOperation();
    const first = router.run(scope('u1'), stalled.operation, { timeoutMs: 1000 });
    const second = jest.fn(answer('never'));
    const late = router.run(scope('u1'), second, { timeoutMs: 100 });
    await flush();
    clock.advance(100);
    await expect(late).rejects.toMatchObject({ code: 'timeout' });
    stalled.calls[0].result.resolve('done');
    await expect(first).resolves.toBe('done');
    expect(second).not.toHaveBeenCalled();
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses an operation whose time ran out before its turn without calling it, even when no timer fired', async () => {
    const clock = new TimerlessClock();
    const { router } = await startedRouter({ clock });
    const stalled = stalledOperation();
    const first = router.run(scope('u1'), stalled.operation);
    const second = jest.fn(answer('never'));
    const late = router.run(scope('u1'), second, { timeoutMs: 100 });
    await flush();
    clock.advance(100);
    stalled.calls[0].result.resolve('done');
    await expect(first).resolves.toBe('done');
    await expect(late).rejects.toMatchObject({ code: 'timeout' });
    expect(second).not.toHaveBeenCalled();
  });

  it('ends a queued call whose caller aborts with scope_route_caller_unavailable, without calling it', async () => {
    const { router } = await startedRouter();
    const stalled = stalledOperation();
    const first = router.run(scope('u1'), stalled.operation);
    const controller = new AbortController();
    const second = jest.fn(answer('never'));
    const aborted = router.run(scope('u1'), second, { signal: controller.signal });
    await flush();
    controller.abort(new Error('client went away'));
    await expect(aborted).rejects.toMatchObject({ code: 'scope_route_caller_unavailable' });
    stalled.calls[0].result.resolve('done');
    await first;
    await flush();
    expect(second).not.toHaveBeenCalled();
  });

  it('turns an adapter exception into the adapter failure code without its text', async () => {
    const { router } = await startedRouter();
    const rejected = await router.run(scope('u1'), () => Promise.reject(new Error('user secret content'))).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(RuntimeServiceError);
    expect(rejected).toMatchObject({ code: 'memory_shard_adapter_failed' });
    expect((rejected as Error).message).not.toContain('secret');
    const thrown = router.run(scope('u1'), () => {
      throw new TypeError('sync secret');
    });
    await expect(thrown).rejects.toMatchObject({ code: 'memory_shard_adapter_failed' });
  });

  it('lets a RuntimeServiceError of the operation pass unchanged', async () => {
    const { router } = await startedRouter({ kind: 'artifact', adapterFailure: 'artifact_shard_adapter_failed', checkScope: checkArtifactScope, keyOf: (s) => scopeKey('artifact', s as ArtifactScope) });
    const quota = new RuntimeServiceError('artifact_quota_exceeded', { limit: 10 });
    await expect(router.run(scope('u1'), () => Promise.reject(quota))).rejects.toBe(quota);
    await expect(router.run(scope('u1'), () => Promise.reject(new Error('x')))).rejects.toMatchObject({ code: 'artifact_shard_adapter_failed' });
  });

  it('refuses bad call options and a non-function operation', async () => {
    const { router } = await startedRouter();
    await expect(router.run(scope('u1'), answer(1), { timeoutMs: -1 })).rejects.toMatchObject({
      code: 'scope_route_caller_unavailable',
      details: { reason: 'invalid_call_options', field: 'timeoutMs' },
    });
    await expect(router.run(scope('u1'), answer(1), { signal: {} as AbortSignal })).rejects.toMatchObject({ details: { field: 'signal' } });
    await expect(router.run(scope('u1'), 'nope' as never)).rejects.toBeInstanceOf(TypeError);
    expect(router.status().cold_routes_in_flight).toBe(0);
  });
});

describe('ScopeRouter — stop', () => {
  it('rejects later calls, old handles and in-flight work with the stale error, and ends every lease', async () => {
    const { router, control, opens } = await startedRouter();
    const stale = () => new RuntimeServiceError('runtime_service_generation_stale');
    const { worker, lease } = await router.resolve(scope('held'));
    const stalled = stalledOperation();
    const running = router.run(scope('busy'), stalled.operation);
    control.stallOpens = true;
    const cold = router.run(scope('cold'), answer(1));
    await flush();
    const signal = stalled.calls[0].call.signal;
    await router.stop(stale);
    await expect(running).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    await expect(cold).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    expect(signal.aborted).toBe(true);
    expect(opens.at(-1)?.call.signal.aborted).toBe(true);
    expect(lease.held).toBe(false);
    expect(lease.release()).toBe(false);
    expect(worker.leaseCount).toBe(0);
    await expect(worker.run(answer(1))).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    await expect(router.run(scope('held'), answer(1))).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    await expect(router.resolve(scope('new'))).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    await expect(router.start()).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    expect(router.status()).toMatchObject({ status: 'stopped', active_scopes: 0, cold_routes_in_flight: 0 });
    stalled.calls[0].result.resolve('late');
    await flush();
    expect(router.status().active_scopes).toBe(0);
  });

  it('falls back to the generation-stale code when the stale error factory throws', async () => {
    const { router } = await startedRouter();
    await router.stop(() => {
      throw new Error('factory bug');
    });
    await expect(router.run(scope('a'), answer(1))).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
  });

  it('uses the given stale error, and the generation-stale code by default', async () => {
    const custom = await startedRouter();
    class Stale extends Error {}
    await custom.router.stop(() => new Stale('stale'));
    await expect(custom.router.run(scope('a'), answer(1))).rejects.toBeInstanceOf(Stale);
    const plain = await startedRouter();
    await plain.router.stop();
    await plain.router.stop();
    await expect(plain.router.run(scope('a'), answer(1))).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
  });

  it('rejects start after a stop that came first', async () => {
    const { router } = routerFixture();
    await router.stop();
    await expect(router.start()).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
  });
});

describe('ScopeRouter — lifecycle, settings, status', () => {
  it('refuses calls before start with runtime_service_bundle_unavailable', async () => {
    const { router } = routerFixture();
    await expect(router.run(scope('a'), answer(1))).rejects.toMatchObject({ code: 'runtime_service_bundle_unavailable' });
    await expect(router.resolve(scope('a'))).rejects.toMatchObject({ code: 'runtime_service_bundle_unavailable' });
  });

  it('reports the status record of spec 07 §4, frozen, also as toJSON and inspect', async () => {
    const { router } = await startedRouter({ maxActiveScopes: 7, maxRouterQueue: 3, idleScopeTimeoutMs: 60_000 });
    await router.run(scope('a'), answer(1));
    const status = router.status();
    expect(status).toEqual({
      status: 'running',
      kind: 'memory',
      adapter: 'test_memory',
      active_scopes: 1,
      max_active_scopes: 7,
      idle_scope_timeout_ms: 60_000,
      idle_reclamation: 'lru_on_capacity',
      idle_evictions: 0,
      cold_routes_in_flight: 0,
      max_router_queue: 3,
      cold_route_admission: 'strict_atomic',
      routing: 'exact_scope',
      worker_supervision: 'per_generation',
      global_quota: false,
    });
    expect(Object.isFrozen(status)).toBe(true);
    expect(JSON.parse(JSON.stringify(router))).toEqual(status);
    expect(inspect(router)).not.toContain(keyOf('a'));
    expect(inspect(router)).toContain('strict_atomic');
  });

  it('refuses a bad setting with invalid_runtime_service_component_config naming it', () => {
    const base = { kind: 'memory', routing: 'exact_scope', durable: false, adapterId: 'a', maxActiveScopes: 1, maxRouterQueue: 1, idleScopeTimeoutMs: 1, callTimeoutMs: 1, checkScope: () => ({}), keyOf: () => 'k', openScope: () => Promise.resolve(), adapterFailure: 'memory_shard_adapter_failed' } as const;
    const fieldOf = (patch: Record<string, unknown>) => {
      try {
        new ScopeRouter({ ...base, ...patch } as never);
        return 'accepted';
      } catch (error) {
        expect(error).toBeInstanceOf(RuntimeServiceError);
        expect((error as RuntimeServiceError).code).toBe('invalid_runtime_service_component_config');
        expect((error as RuntimeServiceError).details?.reason).toBe('component_config');
        return (error as RuntimeServiceError).details?.field;
      }
    };
    expect(fieldOf({})).toBe('accepted');
    expect(fieldOf({ kind: 'session' })).toBe('kind');
    expect(fieldOf({ maxActiveScopes: 0 })).toBe('maxActiveScopes');
    expect(fieldOf({ maxRouterQueue: 1.5 })).toBe('maxRouterQueue');
    expect(fieldOf({ idleScopeTimeoutMs: 86_400_001 })).toBe('idleScopeTimeoutMs');
    expect(fieldOf({ callTimeoutMs: 600_001 })).toBe('callTimeoutMs');
    expect(fieldOf({ routing: 'per_user' })).toBe('routing');
    expect(fieldOf({ openScope: undefined })).toBe('openScope');
    expect(fieldOf({ adapterFailure: 'boom' })).toBe('adapterFailure');
  });

  it('reports an unexpected error of its own bookkeeping once, as runtime_service_child_down', async () => {
    const { router, childDown } = await startedRouter({
      keyOf: () => {
        throw new TypeError('bug');
      },
    });
    await expect(router.run(scope('a'), answer(1))).rejects.toMatchObject({ code: 'runtime_service_child_down', details: { component: 'memory' } });
    await expect(router.resolve(scope('b'))).rejects.toMatchObject({ code: 'runtime_service_child_down' });
    await flush();
    expect(childDown).toEqual(['router_bookkeeping_failed']);
    expect(router.status().cold_routes_in_flight).toBe(0);
  });

  it('aborts an operation signal only once its state is consistent, so a listener that calls back in sees it', async () => {
    const { router, clock } = await startedRouter();
    const seen: unknown[] = [];
    const stalled = stalledOperation();
    let again: Promise<string> | undefined;
    const first = router.run(
      scope('a'),
      (s, call) => {
        call.signal.addEventListener('abort', () => {
          const status = router.status();
          seen.push([status.active_scopes, status.cold_routes_in_flight]);
          again = router.run(scope('a'), answer('again'));
        });
        return stalled.operation(s, call);
      },
      { timeoutMs: 50 },
    );
    await flush();
    clock.advance(50);
    await expect(first).rejects.toMatchObject({ code: 'timeout' });
    expect(seen).toEqual([[1, 0]]);
    expect(await outcome(again as Promise<string>)).toBe('pending');
    stalled.calls[0].result.resolve('late');
    await expect(again).resolves.toBe('again');
  });
});

import { inspect } from 'node:util';
import type { Clock } from '../../shared/time/clock';
import { handled, rejectedWith } from '../../shared/async/handled-promise';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { ServiceCallOptions } from '../services.types';
import { ColdRoutes } from './cold-route';
import { stageRefusal, type CallRoute, type Handoff, type RouterCall } from './router-call';
import { RouterCalls } from './router-calls';
import { RouterTransitions } from './router-transitions';
import { readCallOptions, resolveRouterSettings, SHARED_SCOPE_KEY, type ResolvedRouterSettings, type ScopeRouterSettings } from './router-options';
import { routerStatusRecord, type RouterState, type RouterStatus } from './router-status';
import { leaseFacade, type LeaseRecord } from './scope-lease';
import type { ScopeOperation, ScopeWorker } from './scope-worker';
import { workerHandle, type ResolvedScope } from './scope-worker-handle';
import { WorkerOperations } from './worker-operations';
import { WorkerRegistry } from './worker-registry';

const generationStale = (): Error => new RuntimeServiceError('runtime_service_generation_stale');

/**
 * The scope router of one component (spec 07 §4): every artifact or memory operation goes through
 * it. A worker per scope key (`exact_scope`) or one for everything (`shared`) runs its operations
 * one at a time in arrival order; different scopes run concurrently. A warm call (worker installed)
 * takes a lease synchronously and queues its operation; a cold call passes the strict
 * `maxRouterQueue` admission, validation and resolution (reuse, single-flight join, or creation in a
 * reserved slot, with LRU idle reclamation for durable adapters) under one absolute deadline.
 *
 * Every transition is synchronous; settling callers, aborting signals and calling the adapter are
 * collected and performed once the state is consistent.
 *
 * @example
 * const router = new ScopeRouter({ kind: 'memory', routing: 'exact_scope', durable: true, ... });
 * await router.start();
 * const hits = await router.run(scope, (s, call) => adapter.searchMemory({ ...s, query }, call), { signal });
 */
export class ScopeRouter<S> {
  private readonly settings: ResolvedRouterSettings<S>;
  private readonly clock: Clock;
  private readonly registry: WorkerRegistry<S>;
  private readonly transitions: RouterTransitions;
  private readonly cold: ColdRoutes<S>;
  private readonly operations: WorkerOperations<S>;
  private readonly calls: RouterCalls<S>;
  private state: RouterState = 'starting';
  private staleError: () => Error = generationStale;
  private starting: Promise<void> | undefined;

  /** Throws `invalid_runtime_service_component_config` (`details: {kind, reason: 'component_config'}` naming the settings) for a bad setting. */
  constructor(settings: ScopeRouterSettings<S>) {
    this.settings = resolveRouterSettings(settings);
    this.clock = this.settings.clock;
    this.registry = new WorkerRegistry<S>({
      capacity: this.settings.capacity,
      reclaim: this.settings.idleReclamation === 'lru_on_capacity',
      idleScopeTimeoutMs: this.settings.idleScopeTimeoutMs,
    });
    this.transitions = new RouterTransitions(this.settings.onChildDown);
    this.calls = new RouterCalls<S>({
      clock: this.clock,
      transitions: this.transitions,
      touch: (worker) => this.registry.touch(worker, this.now()),
      leave: (call) => {
        this.cold.leave(call);
        this.operations.dequeue(call);
      },
    });
    this.cold = new ColdRoutes<S>({
      registry: this.registry,
      transitions: this.transitions,
      now: () => this.now(),
      capacity: this.settings.capacity,
      openScope: (key, call) => this.settings.openScope(key, call),
      finish: (call, outcome) => this.calls.finish(call, outcome),
      handOff: (call, worker) => this.handOff(call, worker),
      adapterError: (error) => this.adapterError(error),
    });
    this.operations = new WorkerOperations<S>({
      transitions: this.transitions,
      now: () => this.now(),
      touch: (worker) => this.registry.touch(worker, this.now()),
      finish: (call, outcome) => this.calls.finish(call, outcome),
      adapterError: (error) => this.adapterError(error),
    });
  }

  /** Starts the router (idempotent); under `shared` it creates the one worker (its `openScope` failing rejects the start). */
  start(): Promise<void> {
    if (this.stopped) return rejectedWith(this.stale());
    this.starting ??= handled(this.startWorkers());
    return this.starting;
  }

  /**
   * Runs `operation` on the worker of `scope`, after the operations queued before it, holding a lease
   * until it settles. Rejects with `scope_router_overloaded`, `max_active_scopes_reached`, `timeout`,
   * `scope_route_caller_unavailable`, the scope's invalid code, the adapter failure code (an
   * adapter's own {@link RuntimeServiceError} passes unchanged), or the stale error after `stop`.
   */
  run<T>(scope: unknown, operation: ScopeOperation<S, T>, options?: ServiceCallOptions): Promise<T> {
    if (typeof operation !== 'function') return rejectedWith(new TypeError('operation must be a function'));
    return this.enter(scope, options, (call, worker, checked) => {
      call.lease = this.calls.takeLease(worker, undefined);
      this.operations.enqueue(worker, call, checked, operation);
    }) as Promise<T>;
  }

  /**
   * Routes like {@link run} and hands over the worker and a lease for multi-step use. The lease is
   * bound to `options.signal` (its abort ends it) and otherwise lives until `lease.release()`.
   */
  resolve(scope: unknown, options?: ServiceCallOptions): Promise<ResolvedScope<S>> {
    return this.enter(scope, options, (call, worker, checked) => {
      const lease = this.calls.takeLease(worker, call.callerSignal);
      const handle = workerHandle(worker, (operation, opts) => this.runLeased(lease, checked, operation, opts));
      this.calls.finish(call, { ok: true, value: Object.freeze({ worker: handle, lease: leaseFacade(lease, this.calls.releaseLease) }) });
    }) as Promise<ResolvedScope<S>>;
  }

  /**
   * Stops for good (idempotent): every waiting or running call rejects with `staleError()` (its
   * adapter signal aborts), every lease ends, creations in progress are told to stop, and every later
   * call, `worker.run` and `start` rejects with `staleError()`. Adapter calls still running are not
   * awaited: they hold an aborted signal.
   */
  stop(staleError: () => Error = generationStale): Promise<void> {
    this.transitions.guard(() => {
      if (this.state === 'stopped') return;
      if (typeof staleError === 'function') this.staleError = staleError;
      this.state = 'stopped';
      const { workers, creations } = this.registry.clear();
      for (const creation of creations) {
        creation.settled = true;
        this.transitions.push(() => creation.controller.abort(this.stale()));
      }
      this.calls.failAll(this.stale());
      for (const worker of workers) for (const lease of [...worker.leases]) this.calls.endLease(lease);
    });
    return Promise.resolve();
  }

  /** The router status record (spec 07 §4), from memory. */
  status(): RouterStatus {
    return routerStatusRecord(this.settings, {
      status: this.state,
      activeScopes: this.registry.activeScopes,
      idleEvictions: this.registry.idleEvictions,
      coldRoutesInFlight: this.calls.coldRoutesInFlight,
    });
  }

  toJSON(): RouterStatus {
    return this.status();
  }

  [inspect.custom](): RouterStatus {
    return this.status();
  }

  // ---- entry ---------------------------------------------------------------------------------

  private enter(rawScope: unknown, options: unknown, handoff: Handoff<S>): Promise<unknown> {
    try {
      return this.transitions.operate(() => this.route(rawScope, options, handoff));
    } catch (error) {
      return rejectedWith(this.callError(error));
    }
  }

  /** Warm path, or the cold path's admission, entry checks and validation (spec 07 §4 steps 1–3), then resolution. */
  private route(rawScope: unknown, options: unknown, handoff: Handoff<S>): Promise<unknown> {
    if (this.state !== 'running') return rejectedWith(this.unavailable());
    const { signal, timeoutMs } = readCallOptions(options, { signal: undefined, timeoutMs: this.settings.callTimeoutMs });
    const now = this.now();
    const deadline = now + timeoutMs;
    let route: CallRoute<S> | undefined;
    let invalid: RuntimeServiceError | undefined;
    try {
      const scope = this.settings.checkScope(rawScope);
      route = { key: this.keyFor(scope), scope, handoff };
    } catch (error) {
      if (!RuntimeServiceError.isRuntimeServiceError(error)) throw error;
      invalid = error;
    }
    const warm = route && this.registry.live(route.key);
    if (route && warm) {
      const refusal = stageRefusal(deadline, signal, now);
      if (refusal) return rejectedWith(refusal);
      const call = this.calls.openCall(deadline, signal, route);
      this.handOff(call, warm);
      return call.promise;
    }
    if (this.calls.coldRoutesInFlight >= this.settings.maxRouterQueue) {
      return rejectedWith(new RuntimeServiceError('scope_router_overloaded', { limit: this.settings.maxRouterQueue }));
    }
    const refusal = stageRefusal(deadline, signal, now) ?? invalid;
    if (refusal || !route) return rejectedWith(refusal);
    const call = this.calls.openCall(deadline, signal, route);
    this.calls.takePermit(call);
    this.cold.resolve(call);
    return call.promise;
  }

  /** An operation of a leased worker handle: queued on that worker, no routing. */
  private runLeased(lease: LeaseRecord<S>, scope: S, operation: ScopeOperation<S, unknown>, options?: ServiceCallOptions): Promise<unknown> {
    if (typeof operation !== 'function') return rejectedWith(new TypeError('operation must be a function'));
    try {
      return this.transitions.operate(() => {
        if (this.state !== 'running') return rejectedWith(this.unavailable());
        if (!lease.held) return rejectedWith(new RuntimeServiceError('scope_route_caller_unavailable'));
        const { signal, timeoutMs } = readCallOptions(options, { signal: lease.borrower, timeoutMs: this.settings.callTimeoutMs });
        const now = this.now();
        const refusal = stageRefusal(now + timeoutMs, signal, now);
        if (refusal) return rejectedWith(refusal);
        const call = this.calls.openCall(now + timeoutMs, signal, null);
        this.operations.enqueue(lease.worker, call, scope, operation);
        return call.promise;
      });
    } catch (error) {
      return rejectedWith(this.callError(error));
    }
  }

  /** The end of a route: the cold permit comes back, the worker is touched, the call gets it. */
  private handOff(call: RouterCall<S>, worker: ScopeWorker<S>): void {
    this.calls.returnPermit(call);
    this.registry.touch(worker, this.now());
    const route = call.route as CallRoute<S>;
    route.handoff(call, worker, route.scope);
  }

  // ---- start, errors, plumbing -------------------------------------------------------------

  private async startWorkers(): Promise<void> {
    if (this.settings.routing === 'exact_scope') {
      this.state = 'running';
      return;
    }
    const creation = this.cold.reserveShared(SHARED_SCOPE_KEY);
    try {
      await this.settings.openScope(SHARED_SCOPE_KEY, Object.freeze({ signal: creation.controller.signal, timeoutMs: this.settings.callTimeoutMs }));
    } catch (error) {
      if (this.stopped) throw this.stale();
      this.transitions.guard(() => {
        this.cold.dropShared(creation);
        this.state = 'stopped';
      });
      throw this.adapterError(error);
    }
    if (this.stopped) throw this.stale();
    this.transitions.guard(() => {
      this.cold.installShared(creation);
      this.state = 'running';
    });
  }

  /** Read through a getter so an `await` does not keep TypeScript's narrowing of `state`. */
  private get stopped(): boolean {
    return this.state === 'stopped';
  }

  private keyFor(scope: S): string {
    if (this.settings.routing === 'shared') return SHARED_SCOPE_KEY;
    const key = this.settings.keyOf(scope);
    if (typeof key !== 'string') throw new TypeError('scope key must be a string');
    return key;
  }

  private adapterError(error: unknown): unknown {
    return RuntimeServiceError.isRuntimeServiceError(error) ? error : new RuntimeServiceError(this.settings.adapterFailure);
  }

  /** A call's own refusal passes; anything else escaped the bookkeeping. */
  private callError(error: unknown): unknown {
    if (RuntimeServiceError.isRuntimeServiceError(error)) return error;
    this.transitions.fail();
    return new RuntimeServiceError('runtime_service_child_down', { component: this.settings.kind });
  }

  private unavailable(): unknown {
    return this.state === 'stopped' ? this.stale() : new RuntimeServiceError('runtime_service_bundle_unavailable');
  }

  private stale(): unknown {
    try {
      return this.staleError();
    } catch {
      return generationStale();
    }
  }

  private now(): number {
    return this.clock.monotonicNow();
  }
}

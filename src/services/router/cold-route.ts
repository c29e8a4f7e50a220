import { RuntimeServiceError } from '../runtime-service.errors';
import type { AdapterCallOptions } from '../services.types';
import type { CallOutcome, CallRoute, RouterCall } from './router-call';
import type { RouterTransitions } from './router-transitions';
import type { ScopeCreation } from './scope-creation';
import type { ScopeWorker } from './scope-worker';
import type { WorkerRegistry } from './worker-registry';

/** What the cold path uses of its router. */
export interface ColdRouteDeps<S> {
  readonly registry: WorkerRegistry<S>;
  readonly transitions: RouterTransitions;
  readonly capacity: number;
  now(): number;
  openScope(scopeKey: string, call: AdapterCallOptions): Promise<void>;
  /** Ends a call's wait (frees its holds, including its place among a creation's waiters via {@link ColdRoutes.leave}). */
  finish(call: RouterCall<S>, outcome: CallOutcome): void;
  /** Hands the worker to a call still waiting (returns its permit). */
  handOff(call: RouterCall<S>, worker: ScopeWorker<S>): void;
  adapterError(error: unknown): unknown;
}

/**
 * Resolution and handoff of cold routes (spec 07 §4 steps 4–5): reuse a live worker, join the
 * creation in progress for the key, or create one in a reserved slot. A creation hands its worker
 * only to callers still waiting when `openScope` resolves; with none left its worker is never
 * installed and its slot is freed.
 */
export class ColdRoutes<S> {
  constructor(private readonly deps: ColdRouteDeps<S>) {}

  /** Resolution of an admitted call whose deadline and signal are rechecked first. */
  resolve(call: RouterCall<S>): void {
    const { registry } = this.deps;
    const now = this.deps.now();
    const refusal = call.refusal(now);
    if (refusal) return this.deps.finish(call, { ok: false, error: refusal });
    const key = (call.route as CallRoute<S>).key;
    const live = registry.live(key);
    if (live !== undefined) return this.deps.handOff(call, live);
    const pending = registry.creationOf(key);
    if (pending !== undefined) return this.join(call, pending);
    const creation = registry.reserve(key, now);
    if (creation === null) {
      return this.deps.finish(call, { ok: false, error: new RuntimeServiceError('max_active_scopes_reached', { limit: this.deps.capacity }) });
    }
    this.join(call, creation);
    const timeoutMs = call.remainingMs(now);
    this.deps.transitions.push(() => this.open(creation, timeoutMs));
  }

  /** Takes an ending call out of its creation's waiters; the last one to leave abandons the creation. */
  leave(call: RouterCall<S>): void {
    const creation = call.creation;
    if (creation === null) return;
    call.creation = null;
    creation.waiters.delete(call);
    if (creation.waiters.size > 0 || creation.settled || creation.abandoned) return;
    creation.abandoned = true;
    this.deps.transitions.push(() => creation.controller.abort(new RuntimeServiceError('scope_route_caller_unavailable')));
  }

  /** The one worker of a `shared` router, reserved at start. */
  reserveShared(key: string): ScopeCreation<S> {
    const creation = this.deps.registry.reserve(key, this.deps.now());
    if (creation === null) throw new Error('the shared worker has no slot');
    return creation;
  }

  installShared(creation: ScopeCreation<S>): void {
    creation.settled = true;
    this.deps.registry.install(creation, this.deps.now());
  }

  dropShared(creation: ScopeCreation<S>): void {
    creation.settled = true;
    this.deps.registry.drop(creation);
  }

  private join(call: RouterCall<S>, creation: ScopeCreation<S>): void {
    creation.waiters.add(call);
    call.creation = creation;
  }

  /** Calls the adapter's `openScope` (an effect) and settles the creation when it does. */
  private open(creation: ScopeCreation<S>, timeoutMs: number): void {
    let opening: Promise<void>;
    try {
      opening = Promise.resolve(this.deps.openScope(creation.key, Object.freeze({ signal: creation.controller.signal, timeoutMs })));
    } catch (error) {
      opening = Promise.reject(error);
    }
    opening.then(
      () => this.deps.transitions.guard(() => this.opened(creation)),
      (error: unknown) => this.deps.transitions.guard(() => this.failed(creation, error)),
    );
  }

  /** Handoff: only callers still waiting (deadline and signal rechecked) get the worker; none → it is dropped. */
  private opened(creation: ScopeCreation<S>): void {
    if (creation.settled) return;
    creation.settled = true;
    const now = this.deps.now();
    for (const call of [...creation.waiters]) {
      const refusal = call.refusal(now);
      if (refusal) this.deps.finish(call, { ok: false, error: refusal });
    }
    if (creation.waiters.size === 0) {
      this.deps.registry.drop(creation);
      return;
    }
    this.deps.registry.install(creation, now);
    for (const call of this.takeWaiters(creation)) this.deps.handOff(call, creation.worker);
  }

  /**
   * A failed start frees the slot. Its waiters get the adapter's error, except after abandonment:
   * those joined once the creation was already told to stop, so they resolve afresh.
   */
  private failed(creation: ScopeCreation<S>, error: unknown): void {
    if (creation.settled) return;
    creation.settled = true;
    this.deps.registry.drop(creation);
    const waiters = this.takeWaiters(creation);
    for (const call of waiters) {
      if (creation.abandoned) this.resolve(call);
      else this.deps.finish(call, { ok: false, error: this.deps.adapterError(error) });
    }
  }

  private takeWaiters(creation: ScopeCreation<S>): RouterCall<S>[] {
    const waiters = [...creation.waiters];
    creation.waiters.clear();
    for (const call of waiters) call.creation = null;
    return waiters;
  }
}

import type { RouterCall } from './router-call';
import type { ScopeWorker } from './scope-worker';

/**
 * A worker creation in progress (single flight per key): the reserved slot is its worker in state
 * `starting`, the callers waiting for it (creator and joiners, in arrival order), and the signal
 * its `openScope` receives, aborted once nobody waits any more (`abandoned`).
 */
export class ScopeCreation<S> {
  readonly waiters = new Set<RouterCall<S>>();
  readonly controller = new AbortController();
  /** Every waiter left before `openScope` settled; callers that join afterwards resolve again if it then fails. */
  abandoned = false;
  /** `openScope` settled, or the router stopped: no abort is due any more. */
  settled = false;

  constructor(readonly worker: ScopeWorker<S>) {}

  get key(): string {
    return this.worker.key;
  }
}

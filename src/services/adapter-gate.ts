/**
 * The operations of an adapter in flight, and its close: after `close()` new operations are refused
 * with `closed()`, and `close()` waits for those already running (their failures are theirs).
 */
export class AdapterGate {
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(private readonly closed: () => Error) {}

  get isClosed(): boolean {
    return this.#closed;
  }

  /** Runs `work` (in a later microtask) unless closed, tracked until it settles. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(this.closed());
    const running = Promise.resolve().then(work);
    const tracked = running.catch(() => undefined);
    this.#inFlight.add(tracked);
    void tracked.then(() => this.#inFlight.delete(tracked));
    return running;
  }

  /** Refuses new operations and waits for those in flight. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
  }
}

import type { TraceDelivery, TraceRecordKind } from './trace.types';

/** What a producer needs of a trace store: a receiver for a principal (`TraceStore` fits). */
export interface TraceSource {
  lifecycleReceiver(principal: string): TraceDelivery;
}

/** The `traceStore` option of the Runner and the run registry. */
export interface TraceStoreBinding {
  readonly store: TraceSource;
  /** The principal the producer's events are stored under. @default 'local-runtime' */
  readonly principal?: string;
}

/** The principal of a producer that names none (spec 03 §5). */
export const DEFAULT_TRACE_PRINCIPAL = 'local-runtime';

/** True for a usable `traceStore` option value. */
export function isTraceStoreBinding(value: unknown): value is TraceStoreBinding {
  if (typeof value !== 'object' || value === null) return false;
  const { store, principal } = value as { store?: unknown; principal?: unknown };
  if (typeof store !== 'object' || store === null || typeof (store as TraceSource).lifecycleReceiver !== 'function') return false;
  return principal === undefined || (typeof principal === 'string' && principal.length > 0 && Buffer.byteLength(principal) <= 256);
}

/**
 * A producer's side of a trace store (spec 06 §9): one receiver for its principal, taken lazily; a
 * refusal (capacity) is retried at the next `begin()` (the next invocation or run). Delivery never
 * throws and never waits, so a missing, full, slow or closed store cannot slow or fail the producer.
 */
export class TraceProducer {
  #receiver: TraceDelivery | null = null;
  #refused = false;

  constructor(private readonly binding: TraceStoreBinding | null) {}

  /**
   * A new invocation or run: the receiver is taken again at the first delivery, which refreshes its
   * TTL (and replaces one the store pruned while the producer was idle); a refusal is retried.
   */
  begin(): void {
    this.#receiver = null;
    this.#refused = false;
  }

  deliver(kind: TraceRecordKind, event: object, owner?: AbortSignal): void {
    const receiver = this.#take();
    if (receiver === null) return;
    try {
      receiver.deliver(kind, event, owner);
    } catch {
      // a receiver never throws; a foreign one that does must not reach the producer
    }
  }

  #take(): TraceDelivery | null {
    if (this.#receiver !== null || this.#refused || this.binding === null) return this.#receiver;
    try {
      this.#receiver = this.binding.store.lifecycleReceiver(this.binding.principal ?? DEFAULT_TRACE_PRINCIPAL);
    } catch {
      this.#refused = true;
    }
    return this.#receiver;
  }
}

import { randomBytes } from 'node:crypto';
import { inspect, types } from 'node:util';
import { isAbortSignal } from '../../shared/async/abort-signal';
import { canonicalJson, measure } from '../../json';
import { PendingAdmission } from './pending-admission';
import { MAX_DELIVERY_BYTES } from '../trace-store-options';
import type { TraceDelivery, TraceRecordKind } from '../trace.types';

/** The store's side of a delivery, run in a later turn of the event loop with the canonical JSON copy. */
export type DeliveryEntry = (counter: unknown, capability: string, kind: TraceRecordKind, text: string, owner: AbortSignal | undefined) => void;

/** Each store's delivery entry point, keyed by the store: nothing outside this module can read it. */
const entries = new WeakMap<object, DeliveryEntry>();

/** Makes `store` reachable by the receivers it issues. */
export function registerDeliveryEntry(store: object, entry: DeliveryEntry): void {
  entries.set(store, entry);
}

/** A fresh capability id: `cap-` and 32 random bytes in base64url (unguessable). */
export function newCapability(): string {
  return `cap-${randomBytes(32).toString('base64url')}`;
}

/** The counter as a receiver uses it; a forged receiver may carry any object here. */
interface CounterLike {
  pending: number;
  dropped: number;
  readonly max: number;
}

/**
 * The capability a trace store hands to producers (spec 06 §7): it appends for one principal
 * without holding the principal and without any way to block, slow or fail its caller. Frozen and
 * opaque: it holds a capability id, the store's pending counter and the store, all private, and
 * `JSON.stringify` and `util.inspect` show only the class name.
 *
 * Receivers come from `TraceStore.lifecycleReceiver`; one built by hand holds no capability the
 * store knows and stores nothing.
 */
export class TraceReceiver implements TraceDelivery {
  readonly #capability: string;
  readonly #pending: PendingAdmission;
  readonly #store: object;

  /** @internal Use `TraceStore.lifecycleReceiver`. */
  constructor(capability: string, pending: PendingAdmission, store: object) {
    this.#capability = capability;
    this.#pending = pending;
    this.#store = store;
    Object.freeze(this);
  }

  /**
   * True only for a genuine receiver (private-field brand) whose counter is a genuine
   * `PendingAdmission`; a look-alike object, or a receiver with a plain counter, fails. Runs no
   * code of `value`.
   */
  static isReceiver(value: unknown): value is TraceReceiver {
    return typeof value === 'object' && value !== null && #capability in value && PendingAdmission.isPendingAdmission(value.#pending);
  }

  /**
   * Hands `event` to the store for the receiver's principal and returns at once: `undefined`,
   * never a throw, never a wait. The event is copied through its canonical JSON now, so later
   * changes by the producer are harmless. Dropped (and counted in `lifecycle_delivery_dropped`)
   * when `owner` is not an `AbortSignal`, the event is not plain JSON or exceeds 65 536 bytes, or
   * `maxLifecyclePending` deliveries are in flight. A live `owner` keeps the receiver alive past its
   * TTL, so a long run still lands its terminal event.
   *
   * @example
   * receiver.deliver('workflow_lifecycle', { type: 'run_started', sequence: 1, timestamp: Date.now(), workflow_id, workflow_kind: 'agent_run', run_id }, signal);
   */
  deliver(kind: TraceRecordKind, event: unknown, owner?: AbortSignal): undefined {
    try {
      TraceReceiver.#handOff(this, kind, event, owner);
    } catch {
      // only a forged counter's own code can throw here; the producer never sees it
    }
    return undefined;
  }

  /** Only the class name. */
  toJSON(): string {
    return 'TraceReceiver';
  }

  /** Only the class name. */
  [inspect.custom](): string {
    return 'TraceReceiver';
  }

  static #handOff(receiver: unknown, kind: unknown, event: unknown, owner: unknown): void {
    if (typeof receiver !== 'object' || receiver === null || !(#capability in receiver)) return;
    if (kind !== 'observability' && kind !== 'workflow_lifecycle') return;
    const entry = entries.get(receiver.#store);
    if (entry === undefined) return;
    const counter = receiver.#pending as unknown as CounterLike;
    const text = owner === undefined || isOwnerSignal(owner) ? deliverableCopy(event) : null;
    if (text === null || !(counter.pending < counter.max)) {
      counter.dropped++;
      return;
    }
    counter.pending++;
    setImmediate(entry, counter, receiver.#capability, kind, text, owner as AbortSignal | undefined);
  }
}

/** A genuine `AbortSignal` that is not a Proxy (whose traps would run in the store's task). */
function isOwnerSignal(value: unknown): value is AbortSignal {
  return !types.isProxy(value) && isAbortSignal(value);
}

/** The canonical JSON of a plain JSON event within the delivery limit, else `null`; cost bounded by the limit. */
function deliverableCopy(event: unknown): string | null {
  try {
    return measure(event, MAX_DELIVERY_BYTES).exceeded ? null : canonicalJson(event);
  } catch {
    return null;
  }
}

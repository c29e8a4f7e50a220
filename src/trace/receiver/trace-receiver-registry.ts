import { LinkedList, type ListNode } from '../../shared/collections/linked-list';
import type { TraceReceiver } from './trace-receiver';
import type { PrincipalState } from '../state/trace-state';

/** The store's record of one receiver. */
export interface ReceiverEntry extends ListNode<ReceiverEntry> {
  readonly capability: string;
  readonly principal: PrincipalState;
  readonly receiver: TraceReceiver;
  /** Monotonic ms after which the receiver expires unless an owner is live. */
  expiresAt: number;
  /** Live bound owners and their abort listeners. */
  readonly owners: Map<AbortSignal, () => void>;
}

/**
 * The receivers of a store by capability, in expiry order: every refresh sets `now + ttl` on a
 * monotonic clock, so moving the entry to the tail keeps the list sorted without a heap.
 */
export class ReceiverRegistry {
  readonly #byCapability = new Map<string, ReceiverEntry>();
  readonly #expiry = new LinkedList<ReceiverEntry>();
  #activeOwners = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxOwners: number,
  ) {}

  get size(): number {
    return this.#byCapability.size;
  }

  /** Bound owners not yet aborted, over all receivers. */
  get activeOwners(): number {
    return this.#activeOwners;
  }

  add(principal: PrincipalState, capability: string, receiver: TraceReceiver, now: number): ReceiverEntry {
    const entry: ReceiverEntry = { capability, principal, receiver, expiresAt: now + this.ttlMs, owners: new Map(), prev: null, next: null };
    this.#byCapability.set(capability, entry);
    this.#expiry.push(entry);
    return entry;
  }

  /** The entry of a capability the store still knows (a pruned one never comes back). */
  get(capability: string): ReceiverEntry | undefined {
    return this.#byCapability.get(capability);
  }

  /** Not expired: a live owner, or a TTL still running. */
  isLive(entry: ReceiverEntry, now: number): boolean {
    return entry.owners.size > 0 || entry.expiresAt > now;
  }

  refresh(entry: ReceiverEntry, now: number): void {
    entry.expiresAt = now + this.ttlMs;
    this.#expiry.remove(entry);
    this.#expiry.push(entry);
  }

  /** Binds a live owner once, with one `{once: true}` abort listener, up to `maxOwners` per receiver. */
  bind(entry: ReceiverEntry, owner: AbortSignal): void {
    if (owner.aborted || entry.owners.has(owner) || entry.owners.size >= this.maxOwners) return;
    const onAbort = (): void => {
      if (entry.owners.delete(owner)) this.#activeOwners--;
    };
    entry.owners.set(owner, onAbort);
    this.#activeOwners++;
    owner.addEventListener('abort', onAbort, { once: true });
  }

  /** Forgets a receiver and removes its abort listeners; its capability is rejected from now on. */
  remove(entry: ReceiverEntry): void {
    for (const [owner, onAbort] of entry.owners) owner.removeEventListener('abort', onAbort);
    this.#activeOwners -= entry.owners.size;
    entry.owners.clear();
    this.#byCapability.delete(entry.capability);
    this.#expiry.remove(entry);
  }

  /**
   * Handles up to `batch` expired receivers in expiry order: one with a live owner is renewed, any
   * other removed and passed to `onRemoved`. Returns how many were removed.
   */
  prune(now: number, batch: number, onRemoved: (entry: ReceiverEntry) => void): number {
    let removed = 0;
    for (let handled = 0, head = this.#expiry.head; head !== null && head.expiresAt <= now && handled < batch; handled++, head = this.#expiry.head) {
      if (head.owners.size > 0) this.refresh(head, now);
      else {
        this.remove(head);
        onRemoved(head);
        removed++;
      }
    }
    return removed;
  }

  /** True while an expired receiver waits for a pass. */
  hasExpired(now: number): boolean {
    const head = this.#expiry.head;
    return head !== null && head.expiresAt <= now;
  }

  /** Removes every receiver (the store is closing). */
  clear(): void {
    for (const entry of [...this.#byCapability.values()]) this.remove(entry);
  }
}

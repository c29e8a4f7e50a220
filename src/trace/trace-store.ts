import { inspect } from 'node:util';
import { deepFreeze } from '../json';
import type { Clock } from '../shared/time/clock';
import { projectTraceEvent } from './append/trace-projection';
import { parseQueryOptions, readPage, selectorStreamKey } from './query/trace-query';
import { PendingAdmission } from './receiver/pending-admission';
import { newCapability, registerDeliveryEntry, TraceReceiver } from './receiver/trace-receiver';
import { ReceiverRegistry, type ReceiverEntry } from './receiver/trace-receiver-registry';
import { PruneTimer } from './state/prune-timer';
import { principalDigest } from './state/trace-principal';
import { TraceState, type PrincipalState, type StoredRecord } from './state/trace-state';
import { ALL_STREAM_KEY, subsetStreamKeys } from './state/trace-stream-keys';
import {
  resolveTraceStoreDeps,
  resolveTraceStoreOptions,
  traceStoreLimits,
  type ResolvedTraceStoreOptions,
  type TraceStoreDeps,
  type TraceStoreLimits,
  type TraceStoreOptions,
} from './trace-store-options';
import { newStoreCounters, traceStoreStatus, type StoreCounters } from './trace-store-status';
import { TraceStoreError } from './trace-store.errors';
import type {
  TraceAppendResult,
  TracePage,
  TracePrincipalStatus,
  TracePruneResult,
  TraceQueryOptions,
  TraceSelector,
  TraceStoreStatus,
} from './trace-store.types';
import type { TraceRecord, TraceRecordKind } from './trace.types';

export type { TraceStoreDeps } from './trace-store-options';

/**
 * A volatile, bounded, metadata-only store of observability and lifecycle events, partitioned by
 * principal (spec 06). Every public method is synchronous, so each call is atomic; bad input gets a
 * {@link TraceStoreError} and never corrupts or stops the store. Principals are kept only as their
 * SHA-256 digest. `close()` stops the prune timer; every method then throws `trace_store_unavailable`.
 *
 * @example
 * const store = new TraceStore({ maxEvents: 10_000 });
 * const { cursor } = store.appendObservability('tenant-a', { event: 'runner.tool.call', timestamp_ms: Date.now(), metadata: { run_id: 'r1' } });
 * const page = store.query('tenant-a', { run_id: 'r1' }, { afterCursor: cursor - 1 });
 */
export class TraceStore {
  readonly #options: ResolvedTraceStoreOptions;
  readonly #limits: TraceStoreLimits;
  readonly #clock: Clock;
  #state: TraceState;
  readonly #receivers: ReceiverRegistry;
  readonly #pending: PendingAdmission;
  readonly #counters: StoreCounters = newStoreCounters();
  readonly #pruneTimer: PruneTimer;
  #closed = false;

  /** Throws `invalid_trace_store_options` (spec 06 §2), or `invalid_trace_store_request` for bad `deps`. */
  constructor(options?: TraceStoreOptions, deps?: TraceStoreDeps) {
    this.#options = resolveTraceStoreOptions(options);
    this.#clock = resolveTraceStoreDeps(deps).clock;
    const o = this.#options;
    this.#limits = traceStoreLimits(o);
    this.#state = new TraceState(o.retentionMs, o.maxStreams);
    this.#receivers = new ReceiverRegistry(o.lifecycleReceiverTtlMs, o.maxOwnersPerReceiver);
    this.#pending = new PendingAdmission(o.maxLifecyclePending);
    registerDeliveryEntry(this, this.#receiveDelivery);
    this.#pruneTimer = new PruneTimer(this.#clock, o.pruneIntervalMs, () => this.#prunePass());
  }

  /**
   * Appends an observability event (schema 1) or span (schema 2); returns its cursor (spec 06 §4).
   * Throws `invalid_trace_principal`, `trace_principal_capacity_reached`, the projection's codes
   * (`invalid_trace_event`, `trace_event_input_too_large`, `trace_content_rejected`,
   * `trace_identity_required`) or `trace_event_too_large`; a rejection changes only counters.
   */
  appendObservability(principal: string, event: unknown): TraceAppendResult {
    return this.#appendFor('observability', principal, event);
  }

  /** Appends a workflow / run lifecycle event; returns its cursor. Throws as `appendObservability` (`invalid_trace_lifecycle_event` for the event). */
  appendLifecycle(principal: string, event: unknown): TraceAppendResult {
    return this.#appendFor('workflow_lifecycle', principal, event);
  }

  /**
   * A page of the principal's stream named by `selector` (spec 06 §5), in O(log n + page). Throws
   * `replay_gap` (410) or `cursor_ahead` (409) with the gap record when `afterCursor` is given and
   * lies outside what the stream can answer.
   */
  query(principal: string, selector: TraceSelector, options?: TraceQueryOptions): TracePage {
    this.#assertOpen();
    const digest = principalDigest(principal);
    const key = selectorStreamKey(selector);
    const query = parseQueryOptions(options, this.#options);
    return readPage(this.#state.principals.get(digest)?.streams.get(key), query);
  }

  /**
   * The principal's single receiver (spec 06 §7): created, or the existing one with its TTL
   * refreshed. Throws `trace_lifecycle_receiver_capacity_reached` when `maxLifecycleReceivers`
   * receivers exist (checked first), `trace_principal_capacity_reached` for a new principal beyond
   * `maxPrincipals`.
   */
  lifecycleReceiver(principal: string): TraceReceiver {
    this.#assertOpen();
    const digest = principalDigest(principal);
    const now = this.#clock.monotonicNow();
    const known = this.#state.principals.get(digest);
    if (known?.receiver) {
      this.#receivers.refresh(known.receiver, now);
      return known.receiver.receiver;
    }
    const o = this.#options;
    if (this.#receivers.size >= o.maxLifecycleReceivers) throw new TraceStoreError('trace_lifecycle_receiver_capacity_reached', { limit: o.maxLifecycleReceivers });
    if (known === undefined) this.#assertPrincipalRoom();
    const state = this.#state.principal(digest);
    const capability = newCapability();
    const receiver = new TraceReceiver(capability, this.#pending, this);
    state.receiver = this.#receivers.add(state, capability, receiver, now);
    return receiver;
  }

  /** Runs one bounded prune pass now (spec 06 §6); a follow-up is scheduled when work remains. */
  prune(): TracePruneResult {
    this.#assertOpen();
    return this.#prunePass();
  }

  /** Totals, limits and counters (spec 06 §8); frozen, JSON-safe, content-free. */
  status(): TraceStoreStatus {
    this.#assertOpen();
    return this.#status();
  }

  /** The principal's totals; an unknown principal reads as zeros and `null`. */
  principalStatus(principal: string): TracePrincipalStatus {
    this.#assertOpen();
    const held = this.#state.principals.get(principalDigest(principal));
    const all = held?.streams.get(ALL_STREAM_KEY);
    return Object.freeze({
      schema_version: 1,
      events: held?.events ?? 0,
      encoded_bytes: held?.bytes ?? 0,
      oldest_cursor: all?.index.oldestCursor ?? null,
      latest_cursor: all?.latestCursor ?? 0,
    });
  }

  /**
   * Stops the prune timer and unbinds every owner; afterwards every method throws
   * `trace_store_unavailable` and deliveries in flight are dropped. Calling it again does nothing.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pruneTimer.stop();
    this.#receivers.clear();
    // producers may keep a receiver (and so this store) long after: let the records go
    this.#state = new TraceState(this.#options.retentionMs, this.#options.maxStreams);
  }

  /** Only the class name: the store's state is never shown. */
  [inspect.custom](): string {
    return 'TraceStore';
  }

  #appendFor(kind: TraceRecordKind, principal: unknown, event: unknown): TraceAppendResult {
    this.#assertOpen();
    let digest: string;
    try {
      digest = principalDigest(principal);
    } catch (error) {
      this.#counters.rejected++;
      throw error;
    }
    return this.#append(kind, digest, event);
  }

  /** Steps 1 (capacity), 2–5 (projection), 6–8 of spec 06 §4; a rejection moves only counters. */
  #append(kind: TraceRecordKind, digest: string, event: unknown): TraceAppendResult {
    try {
      const o = this.#options;
      const state = this.#state;
      if (!state.principals.has(digest)) this.#assertPrincipalRoom();
      const projected = projectTraceEvent(kind, event, { contentPolicy: o.contentPolicy, maxEventBytes: o.maxEventBytes });
      const record: { -readonly [K in keyof TraceRecord]: TraceRecord[K] } = {
        cursor: state.lastCursor + 1,
        kind,
        timestamp_ms: Math.floor(this.#clock.wallNow()),
        identity: projected.identity,
        event: projected.event,
      };
      if (projected.contentPruned) record.content_pruned = true;
      const size = Buffer.byteLength(JSON.stringify(record), 'utf8');
      // maxEventBytes ≤ maxBytesPerPrincipal ≤ maxBytes, so this one test covers all three
      if (size > o.maxEventBytes) throw new TraceStoreError('trace_event_too_large', { limit: o.maxEventBytes });
      const now = this.#clock.monotonicNow();
      const principal = state.principal(digest);
      this.#makeRoom(principal, size, now);
      this.#counters.tombstones_pruned += state.insert(principal, deepFreeze(record), size, now + o.retentionMs, subsetStreamKeys(projected.identity));
      this.#counters.accepted++;
      return Object.freeze({ cursor: record.cursor });
    } catch (error) {
      this.#counters.rejected++;
      if (TraceStoreError.isTraceStoreError(error)) {
        if (error.code === 'trace_content_rejected') this.#counters.content_rejected++;
        if (error.code === 'trace_event_too_large') this.#counters.oversized_rejected++;
      }
      throw error;
    }
  }

  /** Step 7: the principal's oldest records go first, then the globally oldest. */
  #makeRoom(principal: PrincipalState, size: number, now: number): void {
    const o = this.#options;
    const state = this.#state;
    while (principal.events + 1 > o.maxEventsPerPrincipal || principal.bytes + size > o.maxBytesPerPrincipal) {
      this.#evict(state.oldestOf(principal) as StoredRecord, now);
    }
    while (state.events + 1 > o.maxEvents || state.bytes + size > o.maxBytes) this.#evict(state.records.oldest() as StoredRecord, now);
  }

  #evict(stored: StoredRecord, now: number): void {
    this.#state.remove(stored, now);
    this.#counters.capacity_evictions++;
  }

  #assertPrincipalRoom(): void {
    const limit = this.#options.maxPrincipals;
    if (this.#state.principals.size >= limit) throw new TraceStoreError('trace_principal_capacity_reached', { limit });
  }

  #assertOpen(): void {
    if (this.#closed) throw new TraceStoreError('trace_store_unavailable', {});
  }

  /** The deferred half of `TraceReceiver.deliver` (spec 06 §7); never throws into the event loop. */
  readonly #receiveDelivery = (counter: unknown, capability: string, kind: TraceRecordKind, text: string, owner: AbortSignal | undefined): void => {
    try {
      if (counter !== this.#pending) {
        this.#counters.lifecycle_capability_rejected++;
        return;
      }
      this.#pending.pending--;
      if (this.#closed) {
        this.#pending.dropped++;
        return;
      }
      const now = this.#clock.monotonicNow();
      const entry = this.#receivers.get(capability);
      if (entry === undefined || !this.#receivers.isLive(entry, now)) {
        this.#counters.lifecycle_capability_rejected++;
        return;
      }
      if (owner !== undefined) this.#receivers.bind(entry, owner);
      this.#receivers.refresh(entry, now);
      this.#append(kind, entry.principal.digest, JSON.parse(text));
    } catch {
      // a rejected append is already counted; nothing reaches the producer
    }
  };

  #prunePass(): TracePruneResult {
    const now = this.#clock.monotonicNow();
    const batch = this.#options.maxPruneBatch;
    const state = this.#state;
    const events = state.expireRecords(now, batch);
    const streams = state.expireTombstones(now, batch);
    const receivers = this.#receivers.prune(now, batch, this.#onReceiverPruned);
    this.#counters.retention_evictions += events;
    this.#counters.tombstones_pruned += streams;
    this.#counters.lifecycle_receivers_pruned += receivers;
    const morePending = state.hasExpired(now) || this.#receivers.hasExpired(now);
    if (morePending) this.#pruneTimer.followUp();
    return Object.freeze({ events_removed: events, streams_removed: streams, lifecycle_receivers_removed: receivers, more_pending: morePending, status: this.#status() });
  }

  readonly #onReceiverPruned = (entry: ReceiverEntry): void => {
    entry.principal.receiver = null;
    this.#state.forgetIfIdle(entry.principal);
  };

  #status(): TraceStoreStatus {
    return traceStoreStatus({ state: this.#state, receivers: this.#receivers, pending: this.#pending, limits: this.#limits, counters: this.#counters });
  }
}

import type { PendingAdmission } from './receiver/pending-admission';
import type { ReceiverRegistry } from './receiver/trace-receiver-registry';
import type { TraceState } from './state/trace-state';
import type { TraceStoreLimits } from './trace-store-options';
import type { TraceStoreCounters, TraceStoreStatus } from './trace-store.types';

/** The counters a store moves itself; `lifecycle_delivery_dropped` is the pending counter's. */
export type StoreCounters = { -readonly [K in Exclude<keyof TraceStoreCounters, 'lifecycle_delivery_dropped'>]: number };

/** Every counter at zero. */
export function newStoreCounters(): StoreCounters {
  return {
    accepted: 0,
    rejected: 0,
    content_rejected: 0,
    oversized_rejected: 0,
    capacity_evictions: 0,
    retention_evictions: 0,
    tombstones_pruned: 0,
    lifecycle_capability_rejected: 0,
    lifecycle_receivers_pruned: 0,
  };
}

/** What `status()` reads: the held state, the receivers, the pending deliveries, the limits and the counters. */
export interface StatusSources {
  readonly state: TraceState;
  readonly receivers: ReceiverRegistry;
  readonly pending: PendingAdmission;
  readonly limits: TraceStoreLimits;
  readonly counters: StoreCounters;
}

/** The `status()` record (spec 06 §8): frozen, JSON-safe, content-free. */
export function traceStoreStatus({ state, receivers, pending, limits, counters }: StatusSources): TraceStoreStatus {
  return Object.freeze({
    schema_version: 1,
    events: state.events,
    encoded_bytes: state.bytes,
    principals: state.principals.size,
    streams: state.streams,
    lifecycle_receivers: receivers.size,
    lifecycle_active_owners: receivers.activeOwners,
    lifecycle_pending: pending.pending,
    oldest_cursor: state.records.oldestCursor ?? null,
    latest_cursor: state.lastCursor,
    limits,
    counters: Object.freeze({ ...counters, lifecycle_delivery_dropped: pending.dropped }),
  });
}

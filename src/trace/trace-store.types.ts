import type { TraceStoreLimits } from './trace-store-options';
import type { TraceIdentityKey, TraceRecord } from './trace.types';

/** `'all'` (the principal's every record) or 1..4 identity members naming one stream (spec 06 §5). */
export type TraceSelector = 'all' | { readonly [K in TraceIdentityKey]?: string };

/** Options of `TraceStore.query` (spec 06 §5). Unknown keys are refused. */
export interface TraceQueryOptions {
  /** Return records after this cursor; when given, gaps are reported (`replay_gap`, `cursor_ahead`). */
  afterCursor?: number;
  /** Records per page, 1..`maxQueryEvents`. @default maxQueryEvents */
  limit?: number;
  /** Bytes per page, `maxEventBytes`..`maxQueryBytes`. @default maxQueryBytes */
  maxBytes?: number;
}

/** What an accepted append returns. */
export interface TraceAppendResult {
  readonly cursor: number;
}

/** A page of one stream (frozen). */
export interface TracePage {
  /** Records with cursor > `afterCursor` (from the oldest retained when absent), ascending. */
  readonly events: readonly TraceRecord[];
  /** Last returned cursor; when none is returned, `afterCursor` if given, else `latest_cursor`. */
  readonly next_cursor: number;
  /** Oldest retained cursor of the stream, or `null`. */
  readonly oldest_available_cursor: number | null;
  /** Highest cursor the stream ever held; 0 for an unknown stream. */
  readonly latest_cursor: number;
  /** Sum of the returned records' sizes. */
  readonly encoded_bytes: number;
  /** `limit` stopped the page with records remaining, or the next record would exceed `maxBytes`. */
  readonly truncated: boolean;
}

/** `details` of `replay_gap` and `cursor_ahead` (a type, not an interface, so it fits `ErrorDetails`). */
export type TraceGapDetails = {
  readonly after_cursor: number;
  readonly oldest_available_cursor: number | null;
  readonly latest_cursor: number;
  /** Highest cursor removed from the stream by eviction or retention (0 when none). */
  readonly evicted_through: number;
};

/** The monotonic counters of `status()` (spec 06 §8). */
export interface TraceStoreCounters {
  readonly accepted: number;
  readonly rejected: number;
  readonly content_rejected: number;
  readonly oversized_rejected: number;
  readonly capacity_evictions: number;
  readonly retention_evictions: number;
  readonly tombstones_pruned: number;
  readonly lifecycle_capability_rejected: number;
  readonly lifecycle_receivers_pruned: number;
  readonly lifecycle_delivery_dropped: number;
}

/** `status()`: totals, limits and counters; no principal, digest, capability, owner or content. */
export interface TraceStoreStatus {
  readonly schema_version: 1;
  readonly events: number;
  readonly encoded_bytes: number;
  readonly principals: number;
  /** Streams held, tombstones included. */
  readonly streams: number;
  readonly lifecycle_receivers: number;
  /** Bound owners not yet aborted. */
  readonly lifecycle_active_owners: number;
  /** Receiver deliveries handed off and not yet run. */
  readonly lifecycle_pending: number;
  /** Oldest retained cursor; `null` when empty. */
  readonly oldest_cursor: number | null;
  /** Last cursor issued; 0 before the first. */
  readonly latest_cursor: number;
  readonly limits: TraceStoreLimits;
  readonly counters: TraceStoreCounters;
}

/** `principalStatus(principal)`; an unknown principal reads as zeros and `null`. */
export interface TracePrincipalStatus {
  readonly schema_version: 1;
  readonly events: number;
  readonly encoded_bytes: number;
  readonly oldest_cursor: number | null;
  /** Highest cursor of the principal still known to the store (0 when none). */
  readonly latest_cursor: number;
}

/** What one `prune()` pass did. */
export interface TracePruneResult {
  readonly events_removed: number;
  /** Tombstones removed. */
  readonly streams_removed: number;
  readonly lifecycle_receivers_removed: number;
  /** Expired work was left for the next pass (which is already scheduled). */
  readonly more_pending: boolean;
  readonly status: TraceStoreStatus;
}

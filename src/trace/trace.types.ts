import type { JsonObject } from '../json/json.types';

/** The two kinds of records (spec 06 §4). */
export type TraceRecordKind = 'observability' | 'workflow_lifecycle';

/** The identity keys that name streams. */
export type TraceIdentityKey = 'run_id' | 'trace_id' | 'workflow_id' | 'invocation_id';

/** The present identity members of a record (at least one). */
export type TraceIdentity = { readonly [K in TraceIdentityKey]?: string };

/** A stored record (frozen). */
export interface TraceRecord {
  readonly cursor: number;
  readonly kind: TraceRecordKind;
  readonly timestamp_ms: number;
  readonly identity: TraceIdentity;
  readonly event: JsonObject;
  readonly content_pruned?: true;
}

/** What the projection (spec 06 §4 steps 2–5) makes of an accepted input. */
export interface ProjectedEvent {
  readonly identity: TraceIdentity;
  readonly event: JsonObject;
  readonly contentPruned: boolean;
}

/**
 * What a producer (the Runner, the run registry) needs of a receiver: `deliver` returns at once,
 * never throws and never waits (spec 06 §7).
 */
export interface TraceDelivery {
  deliver(kind: TraceRecordKind, event: unknown, owner?: AbortSignal): void;
}

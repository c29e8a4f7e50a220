import type { SessionEvent } from '../../runner/session.types';
import type { AdapterCallOptions, IngestionCount, MemoryScope } from '../services.types';
import type { OutboxJobPhase } from './outbox.schema';

/** The adapter id of the durable profile's memory adapter, the default of `enqueue`. */
export const DEFAULT_OUTBOX_ADAPTER_ID = 'durable-local-memory-v1';

/**
 * What the outbox delivers a job to: the memory adapter's incremental ingestion. It must be
 * idempotent by `event_id` (delivery is at least once) and reject an epoch below the scope's erasure
 * epoch with a `RuntimeServiceError` `memory_epoch_fenced`; `call.signal` aborts at the lease end.
 */
export interface OutboxDeliveryTarget {
  addEvents(scope: MemoryScope, events: readonly SessionEvent[], ingestion: { readonly epoch: number; readonly jobId?: string }, call: AdapterCallOptions): Promise<IngestionCount>;
}

/** A job handed to `enqueue`. */
export interface OutboxEnqueueRequest {
  readonly appName: string;
  readonly userId: string;
  /** 1..1024 UTF-8 bytes, no U+0000: the job id at epoch 0, and the seed of the epoch-bound id after an erasure. */
  readonly baseJobId: string;
  /** 1..`maxEventsPerJob` JSON events, each ≤ `maxEventBytes`, all ≤ `maxJobBytes` (canonical JSON). */
  readonly events: readonly SessionEvent[];
  /** 1..the configured `maxAttempts`. @default defaultMaxAttempts */
  readonly maxAttempts?: number;
  /** Which registered target delivers it. @default 'durable-local-memory-v1' */
  readonly adapterId?: string;
}

/** What `enqueue` returns: the job's id and phase, and whether this call created it. */
export interface OutboxEnqueueResult {
  readonly job_id: string;
  readonly phase: OutboxJobPhase;
  readonly created: boolean;
}

/** The outbox's health record (spec 07 §6.5): counts only, no ids, content or tokens. */
export interface OutboxHealthRecord {
  readonly status: 'ready' | 'unavailable';
  readonly persistence: 'postgres';
  readonly tables: 3;
  readonly registry: 'hydrated' | 'hydrating';
  /** From the `global` usage row (the last values read when the check failed). */
  readonly active_jobs: number;
  readonly active_bytes: number;
  readonly terminal_jobs: number;
  /** Database now minus the due time of the oldest due pending or retry_wait job; 0 when none is due. */
  readonly oldest_due_lag_ms: number;
}

/** Payload of `TelemetryEvents.memoryOutboxJob`: phases, the attempt count and a code. */
export interface OutboxJobTelemetry {
  /** `null` for a job just enqueued. */
  readonly from: OutboxJobPhase | null;
  readonly to: OutboxJobPhase;
  readonly attempts: number;
  /** The error code of a retry, failure or cancellation; else `null`. */
  readonly reason: string | null;
}

import type { JsonObject } from '../../json/json.types';
import type { SessionEvent, SessionRecord } from '../session.types';

// The artifact and memory services a Runner hands its tools (`ctx.artifacts`, `ctx.memory`, spec 03 §13).
// The Runner defines what it calls; the services module implements them (spec 07 §1.2, §1.3).

/** Artifacts of one user (`sessionId` absent) or of one session (spec 07 §1.1). Each part 1..256 UTF-8 bytes, no U+0000. */
export interface ArtifactScope {
  readonly appName: string;
  readonly userId: string;
  readonly sessionId?: string;
}

/** Memory of one user of one app. */
export interface MemoryScope {
  readonly appName: string;
  readonly userId: string;
}

/** What every service method takes last. */
export interface ServiceCallOptions {
  /** Aborting it ends the caller's wait (`scope_route_caller_unavailable`). */
  readonly signal?: AbortSignal;
  /** Bound of the call, ms. @default the component's `callTimeoutMs` */
  readonly timeoutMs?: number;
}

/** Paging of a listing. */
export interface PageRequest {
  readonly limit?: number;
  readonly cursor?: string;
}

// ---- artifacts -------------------------------------------------------------------------------

/** A save: `filename` 1..1024 UTF-8 bytes; `mimeType` 1..255 bytes; `customMetadata` ≤ 16 KiB canonical JSON. */
export interface SaveArtifactRequest extends ArtifactScope {
  readonly filename: string;
  readonly artifact: { readonly data: Uint8Array; readonly mimeType: string };
  readonly customMetadata?: JsonObject;
}

/** One stored version without its bytes. */
export interface ArtifactVersionInfo {
  readonly version: number;
  readonly mime_type: string;
  readonly size_bytes: number;
  /** SHA-256 hex of the data. */
  readonly sha256: string;
  readonly custom_metadata: JsonObject;
  readonly created_at_ms: number;
}

/** One stored version with its bytes. */
export interface ArtifactRecord extends ArtifactVersionInfo {
  readonly data: Uint8Array;
}

/** A file of a scope, by name. */
export interface ArtifactFileRequest extends ArtifactScope {
  readonly filename: string;
}

/** The artifact service (spec 07 §1.2), and the shape of its adapters. */
export interface ArtifactService {
  /** The new version: 1 for a new file, else the last number ever given + 1. */
  saveArtifact(request: SaveArtifactRequest, options?: ServiceCallOptions): Promise<number>;
  /** The latest version, or `version`; `undefined` when absent. */
  loadArtifact(request: ArtifactFileRequest & { readonly version?: number }, options?: ServiceCallOptions): Promise<ArtifactRecord | undefined>;
  /** Filenames in bytewise order; without paging all of them up to `legacyListLimit`, else `artifact_list_limit_exceeded`. */
  listArtifactKeys(scope: ArtifactScope, page?: PageRequest, options?: ServiceCallOptions): Promise<{ readonly keys: readonly string[]; readonly next_cursor: string | null; readonly has_more: boolean }>;
  /** Version metadata, ascending. */
  listVersions(request: ArtifactFileRequest, page?: PageRequest, options?: ServiceCallOptions): Promise<{ readonly versions: readonly ArtifactVersionInfo[]; readonly next_cursor: string | null; readonly has_more: boolean }>;
  /** The number of versions deleted: all when `version` is omitted. */
  deleteArtifact(request: ArtifactFileRequest & { readonly version?: number | 'latest' }, options?: ServiceCallOptions): Promise<number>;
}

// ---- memory ----------------------------------------------------------------------------------

/** One search hit. */
export interface MemoryHit {
  /** The entry id. */
  readonly id: string;
  readonly content: string;
  readonly author: string;
  readonly timestamp_ms: number;
  readonly score: number;
}

/** What an ingestion did: entries added, and events already present (by `event_id`). */
export interface IngestionCount {
  readonly added: number;
  readonly duplicates: number;
}

/** The memory service (spec 07 §1.3), and the shape of its adapters. */
export interface MemoryService {
  /** Every `user_message` / `final_output` event with text of the session becomes an entry keyed by its `event_id`. */
  addSessionToMemory(input: { readonly session: SessionRecord; readonly events: readonly SessionEvent[] }, options?: ServiceCallOptions): Promise<IngestionCount>;
  /** Incremental and idempotent by `event_id`; an `epoch` below the scope's erasure epoch → `memory_epoch_fenced`. */
  addEvents(scope: MemoryScope, events: readonly SessionEvent[], ingestion: { readonly epoch: number; readonly jobId?: string }, options?: ServiceCallOptions): Promise<IngestionCount>;
  /** At most `min(limit, maxResults)` hits and `maxResultBytes` of content, bounded after ranking. */
  searchMemory(request: MemoryScope & { readonly query: string; readonly limit?: number }, options?: ServiceCallOptions): Promise<{ readonly memories: readonly MemoryHit[] }>;
  /** Raises the scope's erasure epoch, deletes its entries, fences older ingestion. */
  eraseMemory(scope: MemoryScope, options?: ServiceCallOptions): Promise<{ readonly epoch: number }>;
}

export type {
  ArtifactFileRequest,
  ArtifactRecord,
  ArtifactScope,
  ArtifactService,
  ArtifactVersionInfo,
  IngestionCount,
  MemoryHit,
  MemoryScope,
  MemoryService,
  PageRequest,
  SaveArtifactRequest,
  ServiceCallOptions,
} from '../runner/tools/tool-services.types';

/** What an adapter operation receives from its worker: the time left and a signal that aborts with the call. */
export interface AdapterCallOptions {
  readonly signal: AbortSignal;
  /** ≥ 1. */
  readonly timeoutMs: number;
}

// ---- capabilities ----------------------------------------------------------------------------

/** Where a component keeps its data. */
export type ComponentPersistence = 'volatile' | 'postgres' | 'filesystem';

/** A component's self-description (spec 07 §1.5): frozen, content-free. */
export interface ComponentCapabilities {
  readonly api_version: 1;
  /** Artifact 1, memory 2. */
  readonly contract_version: number;
  readonly immutable_versions: boolean;
  readonly persistence: ComponentPersistence;
  readonly durable: boolean;
  readonly search: 'token_overlap' | 'postgres_full_text' | null;
  readonly idempotent_ingestion: boolean;
  readonly incremental_events: boolean;
  readonly erasure_epoch_fencing: boolean;
  readonly quota_scope: 'shared_adapter' | 'exact_scope_shard';
  readonly idle_reclamation: 'not_required_shared_adapter' | 'lru_on_capacity' | 'disabled_for_volatile_adapter';
}

/**
 * An adapter as the bundle runs it: the service's operations (each called by the scope's worker with
 * the call's remaining time and signal), its capabilities, an optional per-scope start (the
 * filesystem adapter's recovery of temporaries) and a close.
 */
export interface ServiceAdapter {
  /** The adapter's id in status records (`in_memory_artifact`, `postgres_artifact`, `filesystem_artifact`, `in_memory_memory`, `postgres_memory`). */
  readonly id: string;
  readonly capabilities: ComponentCapabilities;
  /** Called once when a worker for `scopeKey` starts. @default nothing */
  openScope?(scopeKey: string, options: AdapterCallOptions): Promise<void>;
  /** Releases what the adapter holds (not the shared DataSource). */
  close(): Promise<void>;
}

import type { ComponentCapabilities, ComponentPersistence } from '../services.types';

function artifactCapabilities(persistence: ComponentPersistence): ComponentCapabilities {
  const durable = persistence !== 'volatile';
  return Object.freeze({
    api_version: 1,
    contract_version: 1,
    immutable_versions: true,
    persistence,
    durable,
    search: null,
    idempotent_ingestion: false,
    incremental_events: false,
    erasure_epoch_fencing: false,
    quota_scope: durable ? 'exact_scope_shard' : 'shared_adapter',
    idle_reclamation: durable ? 'lru_on_capacity' : 'not_required_shared_adapter',
  });
}

/** The in-memory adapter (spec 07 §1.5): one shared, volatile adapter whose quotas are global. */
export const IN_MEMORY_ARTIFACT_CAPABILITIES = artifactCapabilities('volatile');

/** The Postgres adapter: durable, one worker per scope, reclaimed least recently used when capacity runs out. */
export const POSTGRES_ARTIFACT_CAPABILITIES = artifactCapabilities('postgres');

/** The filesystem adapter: durable, one worker per scope, reclaimed least recently used when capacity runs out. */
export const FILESYSTEM_ARTIFACT_CAPABILITIES = artifactCapabilities('filesystem');

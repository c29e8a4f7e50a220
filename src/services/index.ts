export { RuntimeServicesModule, type RuntimeServicesModuleAsyncOptions, type RuntimeServicesModuleOptions, type RuntimeServicesOptionsFactory } from './runtime-services.module';
export { RuntimeServicesHealthIndicator } from './runtime-services.health';
export { MemoryOutbox } from './memory-outbox.provider';
export type { OutboxEnqueueRequest, OutboxEnqueueResult, OutboxHealthRecord } from './outbox/outbox.types';
export { RuntimeServiceSupervisor, type DisabledRunnerSpec, type SupervisorState } from './bundle/runtime-service-supervisor';
export { createRuntimeServices, type RuntimeServicesDeps } from './bundle/runtime-services-factory';
export type { GenerationRunnerSpec, GenerationServices, GenerationState, ServiceGeneration } from './bundle/service-generation';
export { MEMORY_INGESTION_PLUGIN } from './bundle/memory-ingestion-plugin';
export type { RuntimeServiceProfile } from './profile/service-profile';
export { InMemorySessionService, type InMemorySessionServiceOptions } from './sessions/in-memory-session-service';
export { PostgresSessionService, type PostgresSessionServiceOptions } from './sessions/postgres-session-service';
export { RuntimeServiceError, type RuntimeServiceErrorCode } from './runtime-service.errors';
export type {
  ArtifactFileRequest,
  ArtifactRecord,
  ArtifactScope,
  ArtifactService,
  ArtifactVersionInfo,
  ComponentCapabilities,
  IngestionCount,
  MemoryHit,
  MemoryScope,
  MemoryService,
  PageRequest,
  SaveArtifactRequest,
  ServiceCallOptions,
} from './services.types';

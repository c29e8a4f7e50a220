import type { JsonObject } from '../../json/json.types';
import type {
  ArtifactRecord,
  ArtifactService,
  ArtifactVersionInfo,
  IngestionCount,
  MemoryHit,
  MemoryService,
  PageRequest,
} from './tool-services.types';
import type { SessionEvent } from '../session.types';

/** The artifacts a tool sees (`ctx.artifacts`): those of the invocation's app, user and session. */
export interface ToolArtifacts {
  save(filename: string, artifact: { readonly data: Uint8Array; readonly mimeType: string }, customMetadata?: JsonObject): Promise<number>;
  load(filename: string, version?: number): Promise<ArtifactRecord | undefined>;
  list(page?: PageRequest): Promise<{ readonly keys: readonly string[]; readonly next_cursor: string | null; readonly has_more: boolean }>;
  versions(filename: string, page?: PageRequest): Promise<{ readonly versions: readonly ArtifactVersionInfo[]; readonly next_cursor: string | null; readonly has_more: boolean }>;
  delete(filename: string, version?: number | 'latest'): Promise<number>;
}

/** The memory a tool sees (`ctx.memory`): that of the invocation's app and user. */
export interface ToolMemory {
  search(query: string, limit?: number): Promise<{ readonly memories: readonly MemoryHit[] }>;
  addEvents(events: readonly SessionEvent[], ingestion: { readonly epoch: number }): Promise<IngestionCount>;
}

interface InvocationAddress {
  readonly appName: string;
  readonly userId: string;
  readonly sessionId: string;
}

/** `service` bound to the invocation's session, every call carrying the tool call's signal. */
export function toolArtifacts(service: ArtifactService, address: InvocationAddress, signal: AbortSignal): ToolArtifacts {
  const scope = { appName: address.appName, userId: address.userId, sessionId: address.sessionId };
  const options = { signal };
  return Object.freeze({
    save: (filename, artifact, customMetadata) => service.saveArtifact({ ...scope, filename, artifact, ...(customMetadata === undefined ? {} : { customMetadata }) }, options),
    load: (filename, version) => service.loadArtifact({ ...scope, filename, ...(version === undefined ? {} : { version }) }, options),
    list: (page) => service.listArtifactKeys(scope, page, options),
    versions: (filename, page) => service.listVersions({ ...scope, filename }, page, options),
    delete: (filename, version) => service.deleteArtifact({ ...scope, filename, ...(version === undefined ? {} : { version }) }, options),
  } satisfies ToolArtifacts);
}

/** `service` bound to the invocation's user, every call carrying the tool call's signal. */
export function toolMemory(service: MemoryService, address: InvocationAddress, signal: AbortSignal): ToolMemory {
  const scope = { appName: address.appName, userId: address.userId };
  const options = { signal };
  return Object.freeze({
    search: (query, limit) => service.searchMemory({ ...scope, query, ...(limit === undefined ? {} : { limit }) }, options),
    addEvents: (events, ingestion) => service.addEvents(scope, events, ingestion, options),
  } satisfies ToolMemory);
}

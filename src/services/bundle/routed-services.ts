import { readOptions } from '../../shared/options/option-reader';
import type { ScopeRouter } from '../router/scope-router';
import type { ArtifactAdapter } from '../artifacts/artifact-adapter.types';
import type { MemoryAdapter } from '../memory/memory-adapter.types';
import type { AdapterCallOptions, ArtifactScope, ArtifactService, MemoryScope, MemoryService, ServiceCallOptions } from '../services.types';
import type { GenerationGuard } from './generation-guard';
import { anyValue } from '../config-reader';

/** The artifact service of a generation: every call checked against the generation, routed by its scope. */
export function routedArtifactService(router: ScopeRouter<ArtifactScope>, adapter: ArtifactAdapter, guard: GenerationGuard): ArtifactService {
  const route = <T>(scope: unknown, options: ServiceCallOptions | undefined, work: (call: AdapterCallOptions) => Promise<T>) =>
    guard.run(() => router.run(scope, (_scope, call) => work(call), options));
  return Object.freeze({
    saveArtifact: (request, options) => route(request, options, (call) => adapter.saveArtifact(request, call)),
    loadArtifact: (request, options) => route(request, options, (call) => adapter.loadArtifact(request, call)),
    listArtifactKeys: (scope, page, options) => route(scope, options, (call) => adapter.listArtifactKeys(scope, page, call)),
    listVersions: (request, page, options) => route(request, options, (call) => adapter.listVersions(request, page, call)),
    deleteArtifact: (request, options) => route(request, options, (call) => adapter.deleteArtifact(request, call)),
  } satisfies ArtifactService);
}

/** The memory service of a generation: every call checked against the generation, routed by its scope. */
export function routedMemoryService(router: ScopeRouter<MemoryScope>, adapter: MemoryAdapter, guard: GenerationGuard): MemoryService {
  const route = <T>(scope: unknown, options: ServiceCallOptions | undefined, work: (call: AdapterCallOptions) => Promise<T>) =>
    guard.run(() => router.run(scope, (_scope, call) => work(call), options));
  return Object.freeze({
    addSessionToMemory: (input, options) => route(sessionScope(input), options, (call) => adapter.addSessionToMemory(input, call)),
    addEvents: (scope, events, ingestion, options) => route(scope, options, (call) => adapter.addEvents(scope, events, ingestion, call)),
    searchMemory: (request, options) => route(request, options, (call) => adapter.searchMemory(request, call)),
    eraseMemory: (scope, options) => route(scope, options, (call) => adapter.eraseMemory(scope, call)),
  } satisfies MemoryService);
}

/** The memory scope of a session record (its app and user), read with the shared reader; anything else is left for the router to refuse. */
function sessionScope(input: unknown): unknown {
  const outer = readOptions(input ?? null, { session: anyValue }, { name: 'input', unknownKeys: 'ignore' });
  const session = outer.ok ? readOptions(outer.values.session ?? null, { app_name: anyValue, user_id: anyValue }, { name: 'session', unknownKeys: 'ignore' }) : null;
  return session?.ok ? { appName: session.values.app_name, userId: session.values.user_id } : undefined;
}

import type { DataSource } from 'typeorm';
import type { TableSpec } from '../../database/schema/table-spec';
import { PostgresSessionService } from '../sessions/postgres-session-service';
import { InMemorySessionService } from '../sessions/in-memory-session-service';
import { SESSION_EVENT_TABLE_SPEC, SESSION_TABLE_SPEC } from '../sessions/session.schema';
import type { SessionEvent, SessionService } from '../../runner/session.types';
import type { Clock } from '../../shared/time/clock';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import type { ArtifactAdapter } from '../artifacts/artifact-adapter.types';
import { ARTIFACT_TABLE_SPECS } from '../artifacts/artifact.schema';
import { FilesystemArtifactAdapter } from '../artifacts/filesystem-artifact-adapter';
import { InMemoryArtifactAdapter } from '../artifacts/in-memory-artifact-adapter';
import { PostgresArtifactAdapter } from '../artifacts/postgres-artifact-adapter';
import { InMemoryMemoryAdapter } from '../memory/in-memory-memory-adapter';
import type { MemoryAdapter } from '../memory/memory-adapter.types';
import { MEMORY_TABLE_SPECS } from '../memory/memory.schema';
import { PostgresMemoryAdapter } from '../memory/postgres-memory-adapter';
import { PostgresMemoryOutbox } from '../outbox/memory-outbox';
import type { HeldLeases } from '../outbox/outbox-leases';
import { OUTBOX_TABLE_SPECS } from '../outbox/outbox.schema';
import type { CompiledServiceProfile } from '../profile/service-profile';
import type { ComponentSettings } from '../profile/component-settings';
import { ScopeRouter } from '../router/scope-router';
import { checkArtifactScope, checkMemoryScope, scopeKey } from '../service-scope';
import type { AdapterCallOptions, ArtifactScope, MemoryScope } from '../services.types';

/** The adapter id the durable outbox delivers through (spec 07 §5 `memoryIngestion.adapterId`). */
export const DURABLE_MEMORY_ADAPTER_ID = 'durable-local-memory-v1';

/** A routed component: its adapter, the adapter id the profile prescribes, its router. */
export interface RoutedComponent<A = ArtifactAdapter | MemoryAdapter, S = ArtifactScope | MemoryScope> {
  readonly adapter: A & { start?(): Promise<void> };
  readonly expectedAdapterId: string;
  readonly router: ScopeRouter<S>;
}

/** What a generation needs of the outbox. */
export type OutboxComponent = Pick<PostgresMemoryOutbox, 'start' | 'stop' | 'enqueue' | 'health' | 'lastHealth' | 'onDied' | 'defaultMaxAttempts'> & { readonly adapterId: string };

/** Every component of one generation, built (not started) from a compiled profile. */
export interface GenerationComponents {
  readonly session: { readonly service: SessionService; start?(): Promise<void> };
  readonly artifact: RoutedComponent<ArtifactAdapter, ArtifactScope>;
  readonly memory: RoutedComponent<MemoryAdapter, MemoryScope>;
  readonly outbox: OutboxComponent | null;
  /** Every table the generation owns, validated in the `schema` stage (durable). */
  readonly tableSpecs: readonly TableSpec[];
}

/** What the builder needs. */
export interface ComponentDeps {
  readonly dataSource?: DataSource;
  readonly clock?: Clock;
  readonly events?: TelemetrySink;
  /** The outbox leases of every generation of one supervisor (durable). */
  readonly heldLeases?: HeldLeases;
  /** Told when a router's own bookkeeping fails: the generation stops (`runtime_service_child_down`). */
  readonly childDown: (component: 'artifact' | 'memory') => void;
}

type Compiled = Extract<CompiledServiceProfile, { routing: unknown }>;

/**
 * Builds the components the profile prescribes, new objects for every generation: sessions, the
 * artifact and memory adapters with their routers, and (durable) the outbox delivering to the memory
 * router. Adapter configs are validated here, so a bad one fails before anything starts.
 */
export function buildGenerationComponents(compiled: Compiled, deps: ComponentDeps): GenerationComponents {
  const durable = compiled.profile === 'durable_local';
  const dataSource = deps.dataSource as DataSource;
  const clock = deps.clock;
  const artifactAdapter: ArtifactAdapter & { start?(): Promise<void> } =
    compiled.artifactAdapter === 'in_memory'
      ? new InMemoryArtifactAdapter({ adapterConfig: compiled.artifact.adapterConfig, ...(clock ? { clock } : {}) })
      : compiled.artifactAdapter === 'postgres'
        ? new PostgresArtifactAdapter(dataSource, { adapterConfig: compiled.artifact.adapterConfig, ...(clock ? { clock } : {}) })
        : new FilesystemArtifactAdapter(compiled.artifactRoot as string, { adapterConfig: compiled.artifact.adapterConfig, ...(clock ? { clock } : {}) });
  let outbox: PostgresMemoryOutbox | null = null;
  const memoryAdapter: MemoryAdapter = durable
    ? new PostgresMemoryAdapter(dataSource, compiled.memory.adapterConfig, { onErase: (client, scope, epoch) => (outbox as PostgresMemoryOutbox).cancelOlderEpochJobs(client, scope, epoch).then(() => undefined) })
    : new InMemoryMemoryAdapter(compiled.memory.adapterConfig);
  const artifactRouter = router<ArtifactScope>('artifact', compiled, compiled.artifact, artifactAdapter, checkArtifactScope, deps);
  const memoryRouter = router<MemoryScope>('memory', compiled, compiled.memory, memoryAdapter, checkMemoryScope, deps);
  if (durable) {
    outbox = new PostgresMemoryOutbox(dataSource, compiled.memoryOutbox as never, { ...(clock ? { clock } : {}), ...(deps.events ? { events: deps.events } : {}), ...(deps.heldLeases ? { heldLeases: deps.heldLeases } : {}) });
    outbox.registerAdapter(DURABLE_MEMORY_ADAPTER_ID, {
      addEvents: (scope: MemoryScope, events: readonly SessionEvent[], ingestion: { epoch: number; jobId?: string }, call: AdapterCallOptions) =>
        memoryRouter.run(scope, (_scope, routed) => memoryAdapter.addEvents(scope, events, ingestion, routed), { signal: call.signal, timeoutMs: call.timeoutMs }),
    });
  }
  const sessionService: SessionService & { start?(): Promise<void> } = durable ? new PostgresSessionService(dataSource) : new InMemorySessionService();
  return Object.freeze({
    session: { service: sessionService, ...(durable ? { start: () => (sessionService as PostgresSessionService).start() } : {}) },
    artifact: { adapter: artifactAdapter, expectedAdapterId: `${compiled.artifactAdapter}_artifact`, router: artifactRouter },
    memory: { adapter: memoryAdapter, expectedAdapterId: `${compiled.memoryAdapter}_memory`, router: memoryRouter },
    outbox: outbox === null ? null : Object.assign(outbox, { adapterId: DURABLE_MEMORY_ADAPTER_ID }),
    tableSpecs: generationTableSpecs(compiled),
  });
}

/** Every table a generation of `compiled` owns: none outside the durable profile. */
export function generationTableSpecs(compiled: CompiledServiceProfile): readonly TableSpec[] {
  if (compiled.profile !== 'durable_local') return [];
  const artifacts = compiled.artifactAdapter === 'postgres' ? ARTIFACT_TABLE_SPECS : [];
  return [SESSION_TABLE_SPEC, SESSION_EVENT_TABLE_SPEC, ...MEMORY_TABLE_SPECS, ...artifacts, ...OUTBOX_TABLE_SPECS];
}

function router<S extends ArtifactScope | MemoryScope>(
  kind: 'artifact' | 'memory',
  compiled: Compiled,
  settings: ComponentSettings,
  adapter: ArtifactAdapter | MemoryAdapter,
  checkScope: (scope: unknown) => S,
  deps: ComponentDeps,
): ScopeRouter<S> {
  return new ScopeRouter<S>({
    kind,
    routing: compiled.routing,
    durable: adapter.capabilities.durable,
    adapterId: adapter.id,
    maxActiveScopes: settings.maxActiveScopes,
    maxRouterQueue: settings.maxRouterQueue,
    idleScopeTimeoutMs: settings.idleScopeTimeoutMs,
    callTimeoutMs: settings.callTimeoutMs,
    checkScope,
    keyOf: (scope) => scopeKey(kind, scope),
    openScope: (key, call) => adapter.openScope?.(key, call) ?? Promise.resolve(),
    adapterFailure: kind === 'artifact' ? 'artifact_shard_adapter_failed' : 'memory_shard_adapter_failed',
    ...(deps.clock ? { clock: deps.clock } : {}),
    onChildDown: () => deps.childDown(kind),
  });
}

import type { DataSource } from 'typeorm';
import { assertSchema } from '../../database/schema/schema-validator';
import type { TableSpec } from '../../database/schema/table-spec';
import { SchemaValidatorError } from '../../database/schema-validator.errors';
import type { ErrorDetailRecord } from '../../shared/errors/agent-runtime-error';
import type { RunnerPlugin } from '../../runner/agent.types';
import type { SessionService } from '../../runner/session.types';
import { systemClock, type Clock } from '../../shared/time/clock';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { emitSafely, type TelemetrySink } from '../../telemetry/telemetry-sink';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { ArtifactService, ComponentCapabilities, MemoryService } from '../services.types';
import type { CompiledServiceProfile } from '../profile/service-profile';
import { GenerationGuard } from './generation-guard';
import { DependencyWatch } from './generation-probe';
import { generationSessionService } from './generation-session-service';
import { memoryIngestionPlugin } from './memory-ingestion-plugin';
import { routedArtifactService, routedMemoryService } from './routed-services';
import type { GenerationComponents, OutboxComponent, RoutedComponent } from './generation-components';

/** Lifecycle of one generation. */
export type GenerationState = 'starting' | 'running' | 'stopped';

/** Start stages in order (spec 07 §5). */
export type GenerationStage = 'schema' | 'session' | 'artifact' | 'memory' | 'memory_outbox' | 'durable_health';

/** What a generation hands out (spec 07 §5 `services()`). */
export interface GenerationServices {
  readonly profile: 'ephemeral_local' | 'durable_local';
  readonly generation: number;
  readonly sessionService: SessionService;
  readonly artifactService: ArtifactService;
  readonly memoryService: MemoryService;
  readonly memoryOutbox?: OutboxComponent;
}

/** What a Runner of this generation is built from (spec 07 §5 `runnerSpec()`). */
export interface GenerationRunnerSpec {
  readonly profile: 'ephemeral_local' | 'durable_local';
  readonly generation: number;
  readonly runnerOptions: {
    readonly sessionService: SessionService;
    readonly artifactService: ArtifactService;
    readonly memoryService: MemoryService;
    readonly plugins: readonly RunnerPlugin[];
  };
  readonly artifactService: ArtifactService;
  readonly memoryService: MemoryService;
  readonly memoryIngestion?: { readonly mode: 'durable'; readonly adapterId: string; readonly maxAttempts: number; readonly outbox: OutboxComponent };
}

/** Dependencies of a generation. */
export interface GenerationDeps {
  readonly dataSource?: DataSource;
  readonly clock?: Clock;
  readonly events?: TelemetrySink;
  /** The app's one start-up schema check, awaited before the generation validates its own tables (`RuntimeServicesModule` passes it). */
  readonly schemaCheck?: () => Promise<void>;
  /** Told once when the running generation stops on a fault, with the stop reason and its details. */
  readonly onFault?: (reason: string, details: Readonly<Record<string, string>>) => void;
}

type Compiled = Extract<CompiledServiceProfile, { routing: unknown }>;

/**
 * One generation of the runtime service bundle (spec 07 §5): every component of one start,
 * started stage by stage, failing and stopping as a whole. Nothing it handed out survives it:
 * services, session service, runner specs reject with `runtime_service_generation_stale` once it
 * stopped. The shared DataSource is never closed here.
 */
export class ServiceGeneration {
  readonly guard: GenerationGuard;
  #state: GenerationState = 'starting';
  #stopReason: string | null = null;
  #started: Array<() => Promise<void>> = [];
  #services: GenerationServices | null = null;
  readonly #watch: DependencyWatch;

  constructor(
    readonly generation: number,
    private readonly compiled: Compiled,
    private readonly components: GenerationComponents,
    private readonly deps: GenerationDeps = {},
  ) {
    this.guard = new GenerationGuard(generation);
    this.#watch = new DependencyWatch({
      dataSource: deps.dataSource,
      outbox: components.outbox,
      artifactRoot: compiled.artifactAdapter === 'filesystem' ? components.artifact.adapter : null,
      clock: deps.clock ?? systemClock,
      intervalMs: compiled.probeIntervalMs,
      running: () => this.#state === 'running',
      fail: (reason, details) => this.fail(reason, details),
    });
  }

  get state(): GenerationState {
    return this.#state;
  }

  get stopReason(): string | null {
    return this.#stopReason;
  }

  /** Runs the start stages in order; a failure stops what started (reverse order) and rejects `runtime_service_bundle_start_failed {stage, reason}`. */
  async start(): Promise<void> {
    const durable = this.compiled.profile === 'durable_local';
    const { session, artifact, memory, outbox } = this.components;
    try {
      if (durable) await this.#stage('schema', () => this.#assertTables());
      await this.#stage('session', async () => {
        await session.start?.();
      });
      await this.#stage('artifact', () => this.#startRouted(artifact, 'artifact'));
      await this.#stage('memory', () => this.#startRouted(memory, 'memory'));
      if (durable && outbox !== null) await this.#stage('memory_outbox', () => this.#startOutbox(outbox));
      if (durable) await this.#stage('durable_health', () => this.#watch.first());
    } catch (error) {
      await this.#stopComponents();
      this.#state = 'stopped';
      this.guard.stop();
      throw error;
    }
    const guard = this.guard;
    const artifactService = routedArtifactService(artifact.router, artifact.adapter, guard);
    const memoryService = routedMemoryService(memory.router, memory.adapter, guard);
    this.#services = Object.freeze({
      profile: this.compiled.profile,
      generation: this.generation,
      sessionService: generationSessionService(session.service, guard),
      artifactService,
      memoryService,
      ...(outbox === null ? {} : { memoryOutbox: outbox }),
    });
    this.#state = 'running';
    if (durable) this.#watch.start();
    this.#emit('started', null);
  }

  /** The generation's services; `runtime_service_generation_stale` once stopped. */
  services(): GenerationServices {
    this.guard.check();
    if (this.#services === null) throw new RuntimeServiceError('runtime_service_bundle_unavailable');
    return this.#services;
  }

  /** The Runner options of this generation (spread into `new Runner({...})`) and the ingestion plugin. */
  runnerSpec(): GenerationRunnerSpec {
    const services = this.services();
    const outbox = services.memoryOutbox;
    const plugin = memoryIngestionPlugin(
      services.sessionService,
      outbox === undefined
        ? { mode: 'direct', memory: services.memoryService }
        : {
            mode: 'outbox',
            available: () => !this.guard.stopped,
            enqueue: (job) => outbox.enqueue(job),
          },
    );
    return Object.freeze({
      profile: services.profile,
      generation: this.generation,
      runnerOptions: Object.freeze({ sessionService: services.sessionService, artifactService: services.artifactService, memoryService: services.memoryService, plugins: Object.freeze([plugin]) }),
      artifactService: services.artifactService,
      memoryService: services.memoryService,
      ...(outbox === undefined ? {} : { memoryIngestion: Object.freeze({ mode: 'durable' as const, adapterId: outbox.adapterId, maxAttempts: outbox.defaultMaxAttempts, outbox }) }),
    });
  }

  /** Stops the generation (spec 07 §5 "after a stop"): components in reverse order, every reference stale. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    this.guard.stop();
    await this.#stopComponents();
    this.#emit('stopped', this.#stopReason);
  }

  /** Counts an ordinary pool `'error'` of an idle client: logged and counted, never fatal (the next probe decides). */
  countPoolError(): void {
    this.#watch.countPoolError();
  }

  /** The status record (spec 07 §5), from memory: never waits on the database. */
  status(): Record<string, unknown> {
    const durable = this.compiled.profile === 'durable_local';
    const { artifact, memory, outbox } = this.components;
    return Object.freeze({
      schema_version: 1,
      status: this.#state,
      profile: this.compiled.profile,
      generation: this.generation,
      durability: durable ? 'durable' : 'ephemeral',
      session_service: durable ? 'postgres' : 'in_memory',
      artifact: componentStatus(artifact),
      memory: componentStatus(memory),
      memory_outbox: outbox === null ? 'disabled' : (outbox.lastHealth() ?? { status: 'unavailable' }),
      pool_errors: this.#watch.poolErrors,
      restart_semantics: 'atomic_generation_fail_stop',
      ...(this.#stopReason === null ? {} : { stop_reason: this.#stopReason }),
    });
  }

  /** A fault of a running generation (spec 07 §5 table): it stops as a whole and tells its supervisor. */
  fail(reason: string, details: Readonly<Record<string, string>>): void {
    if (this.#state !== 'running') return;
    this.#stopReason = reason;
    void this.stop().finally(() => this.deps.onFault?.(reason, details));
  }

  async #stage(stage: GenerationStage, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      // the app's one start-up report passes through unchanged
      if (SchemaValidatorError.isAgentRuntimeError(error, SchemaValidatorError)) throw error;
      const reason = RuntimeServiceError.isRuntimeServiceError(error) || isCoded(error) ? reasonOf(error) : 'runtime_service_dependency_unavailable';
      const mismatches = mismatchesOf(error);
      throw new RuntimeServiceError('runtime_service_bundle_start_failed', { stage, reason, ...(mismatches ? { mismatches } : {}) });
    }
  }

  async #assertTables(): Promise<void> {
    const dataSource = this.deps.dataSource;
    if (dataSource === undefined) throw new RuntimeServiceError('runtime_service_dependency_unavailable');
    await this.deps.schemaCheck?.();
    const specs: TableSpec[] = [...this.components.tableSpecs];
    await assertSchema(dataSource, specs, {}, (mismatches) => new RuntimeServiceError('runtime_service_bundle_start_failed', { stage: 'schema', reason: 'schema_mismatch', mismatches }));
  }

  async #startRouted(component: RoutedComponent, kind: 'artifact' | 'memory'): Promise<void> {
    if (component.adapter.id !== component.expectedAdapterId) throw new RuntimeServiceError('runtime_service_bundle_start_failed', { stage: kind, reason: 'component_adapter_mismatch' });
    await component.adapter.start?.();
    this.#started.push(() => component.adapter.close());
    await component.router.start();
    this.#started.push(() => component.router.stop(() => this.guard.staleError()));
  }

  async #startOutbox(outbox: OutboxComponent): Promise<void> {
    const capabilities: ComponentCapabilities = this.components.memory.adapter.capabilities;
    if (typeof capabilities.contract_version !== 'number' || capabilities.contract_version < 2 || !capabilities.idempotent_ingestion || !capabilities.incremental_events || !capabilities.erasure_epoch_fencing) {
      throw new RuntimeServiceError('runtime_service_bundle_start_failed', { stage: 'memory_outbox', reason: 'memory_outbox_requires_fenced_idempotent_v2_adapter' });
    }
    outbox.onDied?.(() => this.fail('runtime_service_child_down', { component: 'memory_outbox' }));
    await outbox.start();
    this.#started.push(() => outbox.stop());
  }

  async #stopComponents(): Promise<void> {
    this.#watch.stop();
    // outbox → memory → artifact: the reverse of the start order
    for (const stop of this.#started.splice(0).reverse()) await stop().catch(() => undefined);
  }

  #emit(event: 'started' | 'stopped', reason: string | null): void {
    if (this.deps.events === undefined) return;
    emitSafely(this.deps.events, TelemetryEvents.servicesGeneration, { event, generation: this.generation, profile: this.compiled.profile, reason });
  }
}

function componentStatus(component: RoutedComponent): Readonly<Record<string, unknown>> {
  return Object.freeze({ ...component.router.status(), adapter: component.adapter.id, capabilities: component.adapter.capabilities });
}

function isCoded(error: unknown): error is { code: string } {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string';
}

/** The schema mismatches a failed stage carries on (the schema stage's, a session store's `schema_mismatch`). */
function mismatchesOf(error: unknown): readonly ErrorDetailRecord[] | undefined {
  const mismatches = (error as { details?: { mismatches?: unknown } } | null)?.details?.mismatches;
  return Array.isArray(mismatches) ? (mismatches as ErrorDetailRecord[]) : undefined;
}

/** The reason a failed stage reports: a start failure's own reason, else the error's code. */
function reasonOf(error: { code: string; details?: unknown }): string {
  const details = error.details as { reason?: unknown } | undefined;
  if (error.code === 'runtime_service_bundle_start_failed' && typeof details?.reason === 'string') return details.reason;
  return /^[a-z][a-z0-9_]{0,63}$/.test(error.code) ? error.code : 'runtime_service_dependency_unavailable';
}

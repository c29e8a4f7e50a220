import { DynamicModule, Global, Inject, Module, type Provider, type Type } from '@nestjs/common';
import { AgentRuntimeHealthModule } from '../../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../../shared/nest/module.builder';
import { isPlainObject } from '../../shared/options/plain-object';
import { asTelemetrySink, optionalEventEmitter } from '../../telemetry/event-emitter.provider';
import { InMemoryRunStore } from './stores/in-memory-run-store';
import { RunRegistry } from './run-registry';
import { RunStore } from './stores/run-store';
import { RunnerError } from '../runner.errors';
import { RUNS_MODULE_OPTIONS, resolveRunsModuleOptions, type ResolvedRunsModuleOptions, type RunsModuleOptions } from './runs-module-options';
import { RunsController } from './runs.controller';
import { RunsHealthIndicator } from './runs.health';

/** A class that builds the module options (`useClass` / `useExisting`). */
export interface RunsOptionsFactory {
  createRunsOptions(): RunsModuleOptions | Promise<RunsModuleOptions>;
}

/** A binding of the {@link RunStore} token: `PostgresRunStoreProvider`, or your own `{provide: RunStore, useFactory | useClass | useValue | useExisting}`. */
export type RunStoreProvider = Exclude<Provider<RunStore>, Type>;

/** Where the registry keeps its runs, given when the module is declared (the registry's provider depends on it). */
export interface RunStoreDeclaration {
  /**
   * The provider of the {@link RunStore} token. `PostgresRunStoreProvider` keeps runs on Postgres with
   * `ClusterModule`'s instance (which must be imported): they are followed, cancelled and confirmed from
   * any instance, and taken over when their instance dies (spec 08 §4). Anything else is refused at
   * bootstrap with `invalid_runner_options {field: 'store'}`.
   * @default an `InMemoryRunStore` (or `registry.store` when given): runs live in this process
   */
  readonly store?: RunStoreProvider;
}

/** Options of `RunsModule.forRootAsync`: `imports`, `inject`, exactly one of `useFactory`, `useClass`, `useExisting`, and `store` beside them. */
export interface RunsModuleAsyncOptions extends ModuleAsyncOptions<RunsModuleOptions, RunsOptionsFactory>, RunStoreDeclaration {}

const PROVIDER_KINDS = ['useFactory', 'useClass', 'useValue', 'useExisting'] as const;

/** The rule of the `store` declaration: a provider object of the `RunStore` token. */
const isRunStoreProvider = (value: unknown) => isPlainObject(value) && value.provide === RunStore && PROVIDER_KINDS.some((kind) => kind in value);

const inMemoryStoreProvider: Provider = {
  provide: RunStore,
  inject: [RUNS_MODULE_OPTIONS],
  useFactory: (options: ResolvedRunsModuleOptions): RunStore => options.registry.store ?? new InMemoryRunStore(),
};

/** The registry on its store; its runs report to the app's `EventEmitter2` unless `registry.events` says otherwise. */
const registryProvider: Provider = {
  provide: RunRegistry,
  inject: [RUNS_MODULE_OPTIONS, RunStore, ...optionalEventEmitter()],
  useFactory: (options: ResolvedRunsModuleOptions, store: RunStore, emitter?: unknown) => {
    const events = options.registry.events ?? asTelemetrySink(emitter);
    return new RunRegistry({ ...options.registry, store, ...(events === undefined ? {} : { events }) });
  },
};

/**
 * Global module providing the `RunRegistry` (which owns every run), the `RunStore` it keeps runs in,
 * `RunsController` (the `/runs` routes of spec 03 §10; each run belongs to the principal `resolvePrincipal`
 * gives, others act on it only as `authorizeRun` allows, and without a resolver the routes answer 404)
 * and `RunsHealthIndicator`. When the app imports
 * `EventEmitterModule`, every run reports `agent_runtime.runner.invocation` on the app's `EventEmitter2`
 * (what `MetricsModule` counts) without any option: the registry hands it to the Runner as the run
 * request's `events`, and a Runner's own `events` option, or `registry.events`, wins. Bad options stop
 * bootstrap with `invalid_runner_options`. In the shutdown coordinator's `runs` step (after admission
 * stopped accepting, before it drains) the registry stops taking runs, cancels the executing ones with
 * reason `'shutdown'` and waits up to `shutdownGraceMs` for them; readiness is down from then on.
 *
 * @example
 * RunsModule.forRootAsync({
 *   inject: [SupportAgentFactory],
 *   useFactory: (agents: SupportAgentFactory) => ({ runners: [agents.runner()], resolvePrincipal: (req) => principalOf(req) }),
 *   store: PostgresRunStoreProvider, // cluster mode; without it runs live in this process
 * })
 */
@Global()
@Module({})
export class RunsModule {
  constructor(@Inject(RunRegistry) registry: RunRegistry, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    coordinator.register({ component: 'runs', phase: 'runs', run: () => registry.shutdown(), counts: () => ({ active: registry.status().active }) });
  }

  static forRoot(options: RunsModuleOptions & RunStoreDeclaration): DynamicModule {
    return { ...runsModule.forRoot(options), controllers: [RunsController] };
  }

  static forRootAsync(options: RunsModuleAsyncOptions): DynamicModule {
    return { ...runsModule.forRootAsync(options), controllers: [RunsController] };
  }
}

const runsModule = moduleBuilder<RunsModuleOptions, RunsOptionsFactory, 'store'>({
  module: RunsModule,
  optionsToken: RUNS_MODULE_OPTIONS,
  factoryMethod: 'createRunsOptions',
  declared: { store: isRunStoreProvider },
  resolve: resolveRunsModuleOptions,
  invalid: (details) => new RunnerError('invalid_runner_options', details),
  metadata: (declared) => ({
    imports: [AgentRuntimeHealthModule],
    providers: [(declared.store as RunStoreProvider | undefined) ?? inMemoryStoreProvider, registryProvider, RunsHealthIndicator],
    exports: [RunRegistry, RunStore, RUNS_MODULE_OPTIONS, RunsHealthIndicator],
  }),
});

import { DynamicModule, Global, Inject, Module, type Provider } from '@nestjs/common';
import { AgentRuntimeHealthModule } from '../../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../../shared/nest/module.builder';
import { ClusterInstance } from '../../cluster/cluster-instance';
import { PostgresRunStore } from './stores/postgres/postgres-run-store';
import { InMemoryRunStore } from './stores/in-memory-run-store';
import { RunRegistry } from './run-registry';
import type { RunStore } from './stores/run-store';
import { RunnerError } from '../runner.errors';
import { RUNS_MODULE_OPTIONS, resolveRunsModuleOptions, type ResolvedRunsModuleOptions, type RunsModuleOptions } from './runs-module-options';
import { RunsController } from './runs.controller';
import { RunsHealthIndicator } from './runs.health';

/** A class that builds the module options (`useClass` / `useExisting`). */
export interface RunsOptionsFactory {
  createRunsOptions(): RunsModuleOptions | Promise<RunsModuleOptions>;
}

/** Options of `RunsModule.forRootAsync`: `imports`, `inject`, exactly one of `useFactory`, `useClass`, `useExisting`. */
export type RunsModuleAsyncOptions = ModuleAsyncOptions<RunsModuleOptions, RunsOptionsFactory>;

/** Injection token of the run store the registry uses. */
export const RUN_STORE = Symbol('RUN_STORE');

const storeProvider: Provider = {
  provide: RUN_STORE,
  inject: [RUNS_MODULE_OPTIONS, { token: ClusterInstance, optional: true }],
  useFactory: async (options: ResolvedRunsModuleOptions, instance: ClusterInstance | undefined): Promise<RunStore> => {
    if (options.store === 'memory') return options.registry.store ?? new InMemoryRunStore();
    if (!instance || options.registry.store) throw new RunnerError('invalid_runner_options', { field: 'store' });
    const finishedRunTtlMs = options.registry.finishedRunTtlMs;
    const store = new PostgresRunStore({ instance, ...(finishedRunTtlMs === undefined ? {} : { finishedRunTtlMs }) });
    await store.start();
    instance.attach('runs', () => store.connected);
    return store;
  },
};

const registryProvider: Provider = {
  provide: RunRegistry,
  inject: [RUNS_MODULE_OPTIONS, RUN_STORE],
  useFactory: (options: ResolvedRunsModuleOptions, store: RunStore) => new RunRegistry({ ...options.registry, store }),
};

/**
 * Global module providing the `RunRegistry` (which owns every run), `RunsController` (the `/runs`
 * routes of spec 03 §10) and `RunsHealthIndicator`. Bad options stop bootstrap with
 * `invalid_runner_options`. In the shutdown coordinator's `runs` step (after admission stopped
 * accepting, before it drains) the registry stops taking runs, cancels the executing ones with
 * reason `'shutdown'` and waits up to `shutdownGraceMs` for them; readiness is down from then on.
 *
 * @example
 * RunsModule.forRootAsync({
 *   inject: [SupportAgentFactory],
 *   useFactory: (agents: SupportAgentFactory) => ({ runners: [agents.runner()], resolveUserId: (req) => userOf(req) }),
 * })
 */
@Global()
@Module({})
export class RunsModule {
  constructor(@Inject(RunRegistry) registry: RunRegistry, @Inject(RUN_STORE) store: RunStore, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    coordinator.register({ component: 'runs', phase: 'runs', run: () => registry.shutdown(), counts: () => ({ active: registry.status().active }) });
    if (store instanceof PostgresRunStore) coordinator.register({ component: 'run_store', phase: 'services', run: () => store.stop() });
  }

  static forRoot(options: RunsModuleOptions): DynamicModule {
    return { ...runsModule.forRoot(options), controllers: [RunsController] };
  }

  static forRootAsync(options: RunsModuleAsyncOptions): DynamicModule {
    return { ...runsModule.forRootAsync(options), controllers: [RunsController] };
  }
}

const runsModule = moduleBuilder<RunsModuleOptions, RunsOptionsFactory>({
  module: RunsModule,
  optionsToken: RUNS_MODULE_OPTIONS,
  factoryMethod: 'createRunsOptions',
  resolve: resolveRunsModuleOptions,
  invalid: (details) => new RunnerError('invalid_runner_options', details),
  metadata: () => ({
    imports: [AgentRuntimeHealthModule],
    providers: [storeProvider, registryProvider, RunsHealthIndicator],
    exports: [RunRegistry, RUN_STORE, RUNS_MODULE_OPTIONS, RunsHealthIndicator],
  }),
});

import { DynamicModule, Global, Inject, Module, type Provider } from '@nestjs/common';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/module-builder';
import { RunRegistry } from './run-registry';
import { RunnerError } from './runner.errors';
import { RUNS_MODULE_OPTIONS, resolveRunsModuleOptions, type ResolvedRunsModuleOptions, type RunsModuleOptions } from './runs-module-options';
import { RunsController } from './runs.controller';
import { RunsHealthIndicator } from './runs.health';

/** A class that builds the module options (`useClass` / `useExisting`). */
export interface RunsOptionsFactory {
  createRunsOptions(): RunsModuleOptions | Promise<RunsModuleOptions>;
}

/** Options of `RunsModule.forRootAsync`: `imports`, `inject`, exactly one of `useFactory`, `useClass`, `useExisting`. */
export type RunsModuleAsyncOptions = ModuleAsyncOptions<RunsModuleOptions, RunsOptionsFactory>;

const registryProvider: Provider = {
  provide: RunRegistry,
  inject: [RUNS_MODULE_OPTIONS],
  useFactory: (options: ResolvedRunsModuleOptions) => new RunRegistry(options.registry),
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
  constructor(@Inject(RunRegistry) registry: RunRegistry, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    coordinator.register({ component: 'runs', phase: 'runs', run: () => registry.shutdown(), counts: () => ({ active: registry.status().active }) });
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
    providers: [registryProvider, RunsHealthIndicator],
    exports: [RunRegistry, RUNS_MODULE_OPTIONS, RunsHealthIndicator],
  }),
});

import { BeforeApplicationShutdown, DynamicModule, Global, Inject, Logger, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AGENT_RUNTIME_HEALTH_OPTIONS, resolveHealthOptions, type AgentRuntimeHealthOptions, type ResolvedHealthOptions } from './health-options';
import { ReadinessService } from './readiness.service';
import { ShutdownCoordinator } from './shutdown-coordinator';

/** Token of the options as the user gave them to `forRoot`; absent without `forRoot`. */
const GIVEN_HEALTH_OPTIONS = Symbol('GIVEN_HEALTH_OPTIONS');

const providers: Provider[] = [
  {
    provide: AGENT_RUNTIME_HEALTH_OPTIONS,
    inject: [{ token: GIVEN_HEALTH_OPTIONS, optional: true }],
    useFactory: (given?: AgentRuntimeHealthOptions) => resolveHealthOptions(given),
  },
  {
    provide: ShutdownCoordinator,
    inject: [AGENT_RUNTIME_HEALTH_OPTIONS],
    useFactory: (options: ResolvedHealthOptions) =>
      new ShutdownCoordinator({
        timeoutMs: options.shutdownTimeoutMs,
        minimumStepMs: options.minimumStepMs,
        clock: options.clock,
        logger: new Logger('AgentRuntimeShutdown'),
      }),
  },
  ReadinessService,
];

/**
 * Global module behind readiness and the written shutdown order. `AdmissionModule` and
 * `LedgerModule` import it themselves and register their indicators and shutdown steps; import it
 * (or `forRoot`) to inject `ReadinessService` or register steps of your own on `ShutdownCoordinator`.
 *
 * On application shutdown (`app.close()`, or a signal with `enableShutdownHooks()`), its
 * `beforeApplicationShutdown` runs every registered step in phase order, bounded by
 * `shutdownTimeoutMs`. Nest calls every `beforeApplicationShutdown` before any
 * `onApplicationShutdown`, so the ledger has closed before `@nestjs/typeorm` destroys its DataSource,
 * whatever the import order.
 */
@Global()
@Module({ imports: [DiscoveryModule], providers, exports: [ShutdownCoordinator, ReadinessService, AGENT_RUNTIME_HEALTH_OPTIONS] })
export class AgentRuntimeHealthModule implements BeforeApplicationShutdown {
  constructor(@Inject(ShutdownCoordinator) private readonly coordinator: ShutdownCoordinator) {}

  /**
   * The module with options (shutdown bound, readiness timeout, clock). Invalid options stop
   * bootstrap with `invalid_health_options`.
   */
  static forRoot(options: AgentRuntimeHealthOptions = {}): DynamicModule {
    // a module of its own, so that the library modules' plain import and this one share one coordinator
    return {
      module: AgentRuntimeHealthOptionsModule,
      global: true,
      imports: [AgentRuntimeHealthModule],
      providers: [{ provide: GIVEN_HEALTH_OPTIONS, useValue: options }],
      exports: [GIVEN_HEALTH_OPTIONS, AgentRuntimeHealthModule],
    };
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.coordinator.shutdown();
  }
}

/** Carries the options of {@link AgentRuntimeHealthModule.forRoot}. */
@Module({})
export class AgentRuntimeHealthOptionsModule {}

import { DynamicModule, Global, Inject, Module, type OnModuleInit, type Provider } from '@nestjs/common';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type DeclaredOptions, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { isNonEmptyString } from '../shared/options/option-rules';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter.provider';
import { RuntimeServiceSupervisor } from './bundle/runtime-service-supervisor';
import { createRuntimeServices } from './bundle/runtime-services-factory';
import { readProfileOptions } from './profile/service-profile';
import { RuntimeServiceError } from './runtime-service.errors';
import { RuntimeServicesHealthIndicator } from './runtime-services.health';
import { MemoryOutbox } from './memory-outbox.provider';

/** Injection token of the module options. */
export const RUNTIME_SERVICES_MODULE_OPTIONS = Symbol('RUNTIME_SERVICES_MODULE_OPTIONS');

/** Options of `RuntimeServicesModule.forRoot` (spec 07 §3). */
export interface RuntimeServicesModuleOptions {
  /** `'disabled'`, `'ephemeral_local'` or `'durable_local'`. */
  readonly profile: string;
  /** The profile's configuration (its keys are checked strictly). @default {} */
  readonly config?: unknown;
  /** Name of the `@nestjs/typeorm` DataSource of the durable profile. @default the default DataSource */
  readonly dataSourceName?: string;
}

/** A class that builds the options (`useClass` / `useExisting`). */
export interface RuntimeServicesOptionsFactory {
  createRuntimeServicesOptions(): Omit<RuntimeServicesModuleOptions, 'dataSourceName'> | Promise<Omit<RuntimeServicesModuleOptions, 'dataSourceName'>>;
}

/** Options of `forRootAsync`; `dataSourceName` is given here, as the injection token depends on it. */
export interface RuntimeServicesModuleAsyncOptions extends ModuleAsyncOptions<Omit<RuntimeServicesModuleOptions, 'dataSourceName'>, RuntimeServicesOptionsFactory> {
  readonly dataSourceName?: string;
}

function supervisorProvider(declared: DeclaredOptions<'dataSourceName'>): Provider {
  // @nestjs/typeorm is an optional peer; the durable profile needs its DataSource
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { getDataSourceToken } = require('@nestjs/typeorm') as typeof import('@nestjs/typeorm');
  return {
    provide: RuntimeServiceSupervisor,
    inject: [RUNTIME_SERVICES_MODULE_OPTIONS, { token: getDataSourceToken(declared.dataSourceName as string | undefined), optional: true }, ...optionalEventEmitter()],
    useFactory: (options: { profile: unknown; config: unknown }, dataSource: never, events?: unknown) =>
      createRuntimeServices(options.profile, options.config, { ...(dataSource ? { dataSource } : {}), events: asTelemetrySink(events) }),
  };
}

/**
 * Global module owning the runtime service bundle (spec 07): `RuntimeServiceSupervisor` (services,
 * runner specs, generations), `MemoryOutbox` (always the current generation's) and
 * `RuntimeServicesHealthIndicator`. The profile is compiled when the
 * supervisor is built, the first generation starts in `onModuleInit` (its failure fails start-up),
 * and the bundle stops in the shutdown coordinator's `services` step.
 *
 * @example
 * RuntimeServicesModule.forRoot({ profile: 'durable_local', config: { memoryOutbox: { processor: { concurrency: 2 } } } })
 */
@Global()
@Module({})
export class RuntimeServicesModule implements OnModuleInit {
  constructor(@Inject(RuntimeServiceSupervisor) private readonly supervisor: RuntimeServiceSupervisor, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    coordinator.register({ component: 'runtime_services', phase: 'services', run: () => supervisor.stop(), counts: () => ({ generation: Number(supervisor.status().generation ?? 0) }) });
  }

  static forRoot(options: RuntimeServicesModuleOptions): DynamicModule {
    return runtimeServicesModule.forRoot(options);
  }

  static forRootAsync(options: RuntimeServicesModuleAsyncOptions): DynamicModule {
    return runtimeServicesModule.forRootAsync(options);
  }

  async onModuleInit(): Promise<void> {
    await this.supervisor.start();
  }
}

const runtimeServicesModule = moduleBuilder<Omit<RuntimeServicesModuleOptions, 'dataSourceName'>, RuntimeServicesOptionsFactory, 'dataSourceName'>({
  module: RuntimeServicesModule,
  optionsToken: RUNTIME_SERVICES_MODULE_OPTIONS,
  factoryMethod: 'createRuntimeServicesOptions',
  declared: { dataSourceName: isNonEmptyString },
  invalid: (details) => new RuntimeServiceError('invalid_runtime_service_profile_config', details),
  resolve: readProfileOptions,
  metadata: (declared) => ({
    imports: [AgentRuntimeHealthModule],
    providers: [supervisorProvider(declared), RuntimeServicesHealthIndicator, MemoryOutbox],
    exports: [RuntimeServiceSupervisor, RUNTIME_SERVICES_MODULE_OPTIONS, RuntimeServicesHealthIndicator, MemoryOutbox],
  }),
});

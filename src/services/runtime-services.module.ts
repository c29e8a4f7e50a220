import { DynamicModule, Global, Inject, Module, type InjectionToken, type OnModuleInit, type Provider } from '@nestjs/common';
import { APP_DATA_SOURCE_RULES, type AppDataSourceKey, type AppDataSourceOptions } from '../database/app-data-source';
import { dataSourceInjection } from '../database/app-data-source.provider';
import { StartupSchemaCheck } from '../database/schema/startup-schema-check';
import { StartupSchemaCheckModule } from '../database/startup-schema-check.module';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { optionFailureDetails } from '../shared/options/option-reader';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter.provider';
import { RuntimeServiceSupervisor } from './bundle/runtime-service-supervisor';
import { createRuntimeServices } from './bundle/runtime-services-factory';
import { generationTableSpecs } from './bundle/generation-components';
import { compileServiceProfile, readProfileOptions } from './profile/service-profile';
import { RuntimeServiceError } from './runtime-service.errors';
import { RuntimeServicesHealthIndicator } from './runtime-services.health';
import { MemoryOutbox } from './memory-outbox.provider';

/** Injection token of the module options. */
export const RUNTIME_SERVICES_MODULE_OPTIONS = Symbol('RUNTIME_SERVICES_MODULE_OPTIONS');

/** Options of `RuntimeServicesModule.forRoot` (spec 07 §3). */
export interface RuntimeServicesModuleOptions extends AppDataSourceOptions {
  /** `'disabled'`, `'ephemeral_local'` or `'durable_local'`. */
  readonly profile: string;
  /** The profile's configuration (its keys are checked strictly). @default {} */
  readonly config?: unknown;
}

/** The options a factory returns: the DataSource is given beside it, as the injection token depends on it. */
type RuntimeServicesFactoryOptions = Omit<RuntimeServicesModuleOptions, AppDataSourceKey>;

/** A class that builds the options (`useClass` / `useExisting`). */
export interface RuntimeServicesOptionsFactory {
  createRuntimeServicesOptions(): RuntimeServicesFactoryOptions | Promise<RuntimeServicesFactoryOptions>;
}

/** Options of `forRootAsync`; the DataSource of the durable profile is given here, as the injection token depends on it. */
export interface RuntimeServicesModuleAsyncOptions extends ModuleAsyncOptions<RuntimeServicesFactoryOptions, RuntimeServicesOptionsFactory>, AppDataSourceOptions {}

const SERVICES_DATA_SOURCE = Symbol('RuntimeServicesModule.dataSource');
const refuse = (fields: readonly string[]) => new RuntimeServiceError('invalid_runtime_service_profile_config', optionFailureDetails(fields));

function supervisorProvider(dataSourceToken: InjectionToken): Provider {
  return {
    provide: RuntimeServiceSupervisor,
    // only the durable profile needs a DataSource
    inject: [RUNTIME_SERVICES_MODULE_OPTIONS, { token: dataSourceToken, optional: true }, StartupSchemaCheck, ...optionalEventEmitter()],
    useFactory: (options: { profile: unknown; config: unknown }, dataSource: never, schemaCheck: StartupSchemaCheck, events?: unknown) => {
      const supervisor = createRuntimeServices(options.profile, options.config, {
        ...(dataSource ? { dataSource } : {}),
        events: asTelemetrySink(events),
        schemaCheck: () => schemaCheck.assertAll(),
      });
      schemaCheck.register('runtime_services', () => {
        const specs = generationTableSpecs(compileServiceProfile(options.profile, options.config));
        return dataSource && specs.length > 0 ? { dataSource, specs } : null;
      });
      return supervisor;
    },
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

const runtimeServicesModule = moduleBuilder<RuntimeServicesFactoryOptions, RuntimeServicesOptionsFactory, AppDataSourceKey>({
  module: RuntimeServicesModule,
  optionsToken: RUNTIME_SERVICES_MODULE_OPTIONS,
  factoryMethod: 'createRuntimeServicesOptions',
  declared: APP_DATA_SOURCE_RULES,
  invalid: (details) => new RuntimeServiceError('invalid_runtime_service_profile_config', details),
  resolve: readProfileOptions,
  metadata: (declared) => {
    const dataSource = dataSourceInjection(declared, SERVICES_DATA_SOURCE, refuse);
    return {
      imports: [AgentRuntimeHealthModule, StartupSchemaCheckModule],
      providers: [...dataSource.providers, supervisorProvider(dataSource.token), RuntimeServicesHealthIndicator, MemoryOutbox],
      exports: [RuntimeServiceSupervisor, RUNTIME_SERVICES_MODULE_OPTIONS, RuntimeServicesHealthIndicator, MemoryOutbox],
    };
  },
});

import { DynamicModule, Global, Inject, Logger, Module, type InjectionToken, type OnModuleInit, type Provider } from '@nestjs/common';
import { APP_DATA_SOURCE_RULES, type AppDataSourceKey, type AppDataSourceOptions } from '../database/app-data-source';
import { dataSourceInjection } from '../database/app-data-source.provider';
import { StartupSchemaCheck } from '../database/schema/startup-schema-check';
import { StartupSchemaCheckModule } from '../database/startup-schema-check.module';
import { evalStoreSchemaTarget } from './service/eval-store-check';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { AGENT_RUNTIME_HEALTH_OPTIONS, type ResolvedHealthOptions } from '../health/health-options';
import { RestartSupervisor } from '../health/restart-supervisor';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { RunRegistry } from '../runner/runs/run-registry';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { optionFailureDetails } from '../shared/options/option-reader';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter.provider';
import { EvalServiceError } from './eval.errors';
import { EvaluationController } from './evaluation.controller';
import { EvalServiceHealthIndicator } from './evaluation.health';
import { EVALUATION_MODULE_OPTIONS, resolveEvaluationModuleOptions, type EvaluationModuleOptions, type ResolvedEvaluationModuleOptions } from './evaluation-module-options';
import { EvalService } from './service/eval-service';
import { PostgresEvalStore } from './store/postgres-eval-store';

/** `forRoot` options with the DataSource to use. */
export interface EvaluationModuleRootOptions extends EvaluationModuleOptions, AppDataSourceOptions {}

/** A class that builds the module options (`useClass` / `useExisting`). */
export interface EvaluationOptionsFactory {
  createEvaluationOptions(): EvaluationModuleOptions | Promise<EvaluationModuleOptions>;
}

/** Options of `EvaluationModule.forRootAsync`; the DataSource is given here, as the injection token depends on it. */
export interface EvaluationModuleAsyncOptions extends ModuleAsyncOptions<EvaluationModuleOptions, EvaluationOptionsFactory>, AppDataSourceOptions {}

const EVALUATION_DATA_SOURCE = Symbol('EvaluationModule.dataSource');
const refuse = (fields: readonly string[]) => new EvalServiceError('invalid_eval_service_options', optionFailureDetails(fields));

/** The service and the supervisor that restarts it after a stop on a fault (spec 05 §6.1). */
interface SupervisedEvalService {
  readonly service: EvalService;
  readonly supervisor: RestartSupervisor;
}

const SUPERVISED_EVAL_SERVICE = Symbol('EvaluationModule.supervisedService');

function serviceProviders(dataSourceToken: InjectionToken): Provider[] {
  return [
    {
      provide: SUPERVISED_EVAL_SERVICE,
      inject: [EVALUATION_MODULE_OPTIONS, dataSourceToken, AGENT_RUNTIME_HEALTH_OPTIONS, { token: RunRegistry, optional: true }, ...optionalEventEmitter()],
      useFactory: (options: ResolvedEvaluationModuleOptions, dataSource: never, health: ResolvedHealthOptions, registry: RunRegistry | undefined, events?: unknown): SupervisedEvalService => {
        const store = new PostgresEvalStore(dataSource, options.store);
        const supervisor = new RestartSupervisor({ restart: () => service.restart(), ...(health.clock ? { clock: health.clock } : {}) });
        const service: EvalService = new EvalService(
          {
            store: options.wrapStore ? options.wrapStore(store) : store,
            ...(registry ? { registry } : {}),
            events: asTelemetrySink(events),
            logger: new Logger('EvaluationModule'),
            onFaultStop: () => supervisor.stopped(),
          },
          options.service,
        );
        return { service, supervisor };
      },
    },
    { provide: EvalService, inject: [SUPERVISED_EVAL_SERVICE], useFactory: (supervised: SupervisedEvalService) => supervised.service },
  ];
}

const EVALUATION_SCHEMA_REGISTRATION = Symbol('EvaluationModule.schemaRegistration');

/** Registers the store's tables with the app's start-up check; apart from the service, which waits for the `RunRegistry`. */
function schemaRegistrationProvider(dataSourceToken: InjectionToken): Provider {
  return {
    provide: EVALUATION_SCHEMA_REGISTRATION,
    inject: [EVALUATION_MODULE_OPTIONS, dataSourceToken, StartupSchemaCheck],
    useFactory: (options: ResolvedEvaluationModuleOptions, dataSource: never, schemaCheck: StartupSchemaCheck) =>
      (schemaCheck.register('evaluation', () => evalStoreSchemaTarget(dataSource, options.store)), true),
  };
}

/**
 * Global module owning one `EvalService` and its `PostgresEvalStore` on a TypeORM DataSource, with
 * the `/evaluations` routes and `EvalServiceHealthIndicator` (spec 05 §10). Jobs name the agents of
 * the `RunRegistry` that `RunsModule` provides. `onModuleInit` starts the service: a store owned by
 * another instance leaves it in `standby` (readiness down) until that owner's session ends. A service
 * that stops on a fault (spec 05 §6.1) is restarted in-process as a new generation after 1 s,
 * doubling to 30 s while its start fails, on the health module's clock; readiness is down meanwhile
 * and liveness never depends on it. On shutdown the restarts end and the service stops in the
 * coordinator's `services` step, after runs and admission drained: running jobs are abandoned
 * without writing, and the next start recovers their rows as failed.
 *
 * @example
 * EvaluationModule.forRoot({ resolveScope: (req) => ({ app: tenantOf(req) }), service: { maxConcurrency: 2 } })
 */
@Global()
@Module({})
export class EvaluationModule implements OnModuleInit {
  private readonly service: EvalService;

  constructor(
    @Inject(SUPERVISED_EVAL_SERVICE) { service, supervisor }: SupervisedEvalService,
    @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator,
    @Inject(StartupSchemaCheck) private readonly schemaCheck: StartupSchemaCheck,
  ) {
    this.service = service;
    coordinator.register({
      component: 'evaluation',
      phase: 'services',
      run: () => {
        supervisor.close();
        return service.stop();
      },
      counts: () => ({ active_jobs: service.capabilities().active_jobs, queued_jobs: service.capabilities().queued_jobs }),
    });
  }

  static forRoot(options: EvaluationModuleRootOptions = {}): DynamicModule {
    return { ...evaluationModule.forRoot(options), controllers: [EvaluationController] };
  }

  static forRootAsync(options: EvaluationModuleAsyncOptions): DynamicModule {
    return { ...evaluationModule.forRootAsync(options), controllers: [EvaluationController] };
  }

  async onModuleInit(): Promise<void> {
    await this.schemaCheck.assertAll();
    await this.service.start();
  }
}

const evaluationModule = moduleBuilder<EvaluationModuleOptions, EvaluationOptionsFactory, AppDataSourceKey>({
  module: EvaluationModule,
  optionsToken: EVALUATION_MODULE_OPTIONS,
  factoryMethod: 'createEvaluationOptions',
  declared: APP_DATA_SOURCE_RULES,
  resolve: resolveEvaluationModuleOptions,
  invalid: (details) => new EvalServiceError('invalid_eval_service_options', details),
  metadata: (declared) => {
    const dataSource = dataSourceInjection(declared, EVALUATION_DATA_SOURCE, refuse);
    return {
      imports: [AgentRuntimeHealthModule, StartupSchemaCheckModule],
      providers: [...dataSource.providers, ...serviceProviders(dataSource.token), schemaRegistrationProvider(dataSource.token), EvalServiceHealthIndicator],
      exports: [EvalService, EVALUATION_MODULE_OPTIONS, EvalServiceHealthIndicator],
    };
  },
});

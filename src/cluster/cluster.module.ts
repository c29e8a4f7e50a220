import { DynamicModule, Global, Inject, Module, type InjectionToken, type Provider } from '@nestjs/common';
import { APP_DATA_SOURCE_RULES, type AppDataSourceKey, type AppDataSourceOptions } from '../database/app-data-source';
import { dataSourceInjection } from '../database/app-data-source.provider';
import { StartupSchemaCheckModule } from '../database/startup-schema-check.module';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { integerIn, isNonEmptyString } from '../shared/options/option-rules';
import { readOptions, optionFailureDetails } from '../shared/options/option-reader';
import { ClusterInstance } from './cluster-instance';
import { ClusterError } from './cluster.errors';
import { ClusterHealthIndicator } from './cluster.health';

/** Injection token of the resolved `ClusterModule` options. */
export const CLUSTER_MODULE_OPTIONS = Symbol('CLUSTER_MODULE_OPTIONS');

/** Options of `ClusterModule.forRoot` (spec 08 §2). Unknown keys stop bootstrap with `invalid_cluster_options`. */
export interface ClusterModuleOptions extends AppDataSourceOptions {
  /** This instance's id; must differ between instances. @default hostname + pid + a random suffix */
  instanceId?: string;
  /** How long the instance acts as live after its lock last answered, in ms (1..3,600,000). @default 2000 */
  lockGraceMs?: number;
  /** What peers wait beyond the grace before they reuse a dead instance's capacity, in ms (0..3,600,000). @default 1000 */
  lockGraceMarginMs?: number;
}

/** A class that builds the cluster options (`useClass` / `useExisting`). */
export interface ClusterOptionsFactory {
  createClusterOptions(): ClusterModuleOptions | Promise<ClusterModuleOptions>;
}

/** Options of `ClusterModule.forRootAsync`; the DataSource is given beside the factory, as for the ledger. */
export interface ClusterModuleAsyncOptions extends ModuleAsyncOptions<ClusterModuleOptions, ClusterOptionsFactory>, AppDataSourceOptions {}

const CLUSTER_DATA_SOURCE = Symbol('ClusterModule.dataSource');
const refuse = (fields: readonly string[]) => new ClusterError('invalid_cluster_options', optionFailureDetails(fields));

/**
 * Global module that makes this process an instance of a cluster on the TypeORM DataSource: it
 * provides the started `ClusterInstance` (its id and the instance lock that makes it live to the
 * others), which `AdmissionModule.forRoot({..., cluster: {}})` and `RunsModule.forRoot({..., store:
 * 'postgres'})` use, and `ClusterHealthIndicator`. A taken instance id (`cluster_instance_id_in_use`)
 * or an unreachable database (`cluster_unavailable`) stops bootstrap. The instance stops in the
 * shutdown coordinator's `cluster` step, after admission drained and the runs were handed over.
 */
@Global()
@Module({})
export class ClusterModule {
  constructor(@Inject(ClusterInstance) instance: ClusterInstance, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    coordinator.register({ component: 'cluster_instance', phase: 'cluster', run: () => instance.stop(), counts: () => ({ live: instance.live }) });
  }

  static forRoot(options: ClusterModuleOptions = {}): DynamicModule {
    return clusterModule.forRoot(options);
  }

  static forRootAsync(options: ClusterModuleAsyncOptions): DynamicModule {
    return clusterModule.forRootAsync(options);
  }
}

type ResolvedClusterModuleOptions = Pick<ClusterModuleOptions, 'instanceId' | 'lockGraceMs' | 'lockGraceMarginMs'>;

const CLUSTER_MODULE_RULES = { instanceId: isNonEmptyString, lockGraceMs: integerIn(1, 3_600_000), lockGraceMarginMs: integerIn(0, 3_600_000) };

function resolveClusterModuleOptions(options: unknown): ResolvedClusterModuleOptions {
  const read = readOptions(options, CLUSTER_MODULE_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new ClusterError('invalid_cluster_options', optionFailureDetails(read.fields));
  return Object.freeze({ ...(read.values as ResolvedClusterModuleOptions) });
}

function instanceProvider(dataSourceToken: InjectionToken): Provider {
  return {
    provide: ClusterInstance,
    inject: [CLUSTER_MODULE_OPTIONS, dataSourceToken],
    useFactory: async (options: ResolvedClusterModuleOptions, dataSource: never) => {
      const instance = new ClusterInstance({ dataSource, ...options });
      await instance.start();
      return instance;
    },
  };
}

const clusterModule = moduleBuilder<ClusterModuleOptions, ClusterOptionsFactory, AppDataSourceKey>({
  module: ClusterModule,
  optionsToken: CLUSTER_MODULE_OPTIONS,
  factoryMethod: 'createClusterOptions',
  declared: APP_DATA_SOURCE_RULES,
  resolve: resolveClusterModuleOptions,
  invalid: (details) => new ClusterError('invalid_cluster_options', details),
  metadata: (declared) => {
    const dataSource = dataSourceInjection(declared, CLUSTER_DATA_SOURCE, refuse);
    return {
      // the one start-up schema check of the modules on this instance (cluster admission, the run store)
      imports: [AgentRuntimeHealthModule, StartupSchemaCheckModule],
      providers: [...dataSource.providers, instanceProvider(dataSource.token), ClusterHealthIndicator],
      exports: [ClusterInstance, CLUSTER_MODULE_OPTIONS, ClusterHealthIndicator],
    };
  },
});

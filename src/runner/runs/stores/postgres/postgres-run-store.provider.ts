import type { FactoryProvider } from '@nestjs/common';
import { ClusterInstance } from '../../../../cluster/cluster-instance';
import { StartupSchemaCheck } from '../../../../database/schema/startup-schema-check';
import { ShutdownCoordinator } from '../../../../health/shutdown-coordinator';
import { RunnerError } from '../../../runner.errors';
import { RUNS_MODULE_OPTIONS, type ResolvedRunsModuleOptions } from '../../runs-module-options';
import { RunStore } from '../run-store';
import { PostgresRunStore } from './postgres-run-store';

/**
 * `RunsModule`'s `store` for cluster mode (spec 08 §4): binds {@link RunStore} to a `PostgresRunStore`
 * on `ClusterModule`'s instance, with the registry's `finishedRunTtlMs`. The store is started in
 * `onModuleInit`, after the app's one start-up schema check (a schema mismatch or an unreachable
 * database stops bootstrap), its LISTEN connection joins
 * the cluster's readiness as `runs`, and the shutdown coordinator stops it in its `services` step
 * (`run_store`). Without `ClusterModule`, or beside a `registry.store`, bootstrap stops with
 * `invalid_runner_options {field: 'store'}`.
 *
 * @example
 * RunsModule.forRoot({ runners, store: PostgresRunStoreProvider })
 */
export const PostgresRunStoreProvider: FactoryProvider<RunStore> = {
  provide: RunStore,
  // optional: without ClusterModule (which imports the check) bootstrap stops with this provider's own error
  inject: [RUNS_MODULE_OPTIONS, ShutdownCoordinator, { token: StartupSchemaCheck, optional: true }, { token: ClusterInstance, optional: true }],
  useFactory: (options: ResolvedRunsModuleOptions, coordinator: ShutdownCoordinator, schemaCheck: StartupSchemaCheck | undefined, instance: ClusterInstance | undefined): RunStore => {
    if (!schemaCheck) throw new RunnerError('invalid_runner_options', { field: 'store' });
    if (!instance || options.registry.store) throw new RunnerError('invalid_runner_options', { field: 'store' });
    const finishedRunTtlMs = options.registry.finishedRunTtlMs;
    const store = new PostgresRunStore({ instance, ...(finishedRunTtlMs === undefined ? {} : { finishedRunTtlMs }) });
    schemaCheck.register('runs', () => store.schemaTarget);
    coordinator.register({ component: 'run_store', phase: 'services', run: () => store.stop() });
    // Nest calls the hook of a provider's value: the store starts once every module registered its tables
    const onModuleInit = async (): Promise<void> => {
      await schemaCheck.assertAll();
      await store.start();
      instance.attach('runs', () => store.connected);
    };
    return Object.assign(store, { onModuleInit });
  },
};

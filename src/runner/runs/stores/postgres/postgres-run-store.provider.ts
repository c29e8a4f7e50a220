import type { FactoryProvider } from '@nestjs/common';
import { ClusterInstance } from '../../../../cluster/cluster-instance';
import { ShutdownCoordinator } from '../../../../health/shutdown-coordinator';
import { RunnerError } from '../../../runner.errors';
import { RUNS_MODULE_OPTIONS, type ResolvedRunsModuleOptions } from '../../runs-module-options';
import { RunStore } from '../run-store';
import { PostgresRunStore } from './postgres-run-store';

/**
 * `RunsModule`'s `store` for cluster mode (spec 08 §4): binds {@link RunStore} to a `PostgresRunStore`
 * on `ClusterModule`'s instance, with the registry's `finishedRunTtlMs`. The store is started before
 * bootstrap ends (a schema mismatch or an unreachable database stops it), its LISTEN connection joins
 * the cluster's readiness as `runs`, and the shutdown coordinator stops it in its `services` step
 * (`run_store`). Without `ClusterModule`, or beside a `registry.store`, bootstrap stops with
 * `invalid_runner_options {field: 'store'}`.
 *
 * @example
 * RunsModule.forRoot({ runners, store: PostgresRunStoreProvider })
 */
export const PostgresRunStoreProvider: FactoryProvider<RunStore> = {
  provide: RunStore,
  inject: [RUNS_MODULE_OPTIONS, ShutdownCoordinator, { token: ClusterInstance, optional: true }],
  useFactory: async (options: ResolvedRunsModuleOptions, coordinator: ShutdownCoordinator, instance: ClusterInstance | undefined): Promise<RunStore> => {
    if (!instance || options.registry.store) throw new RunnerError('invalid_runner_options', { field: 'store' });
    const finishedRunTtlMs = options.registry.finishedRunTtlMs;
    const store = new PostgresRunStore({ instance, ...(finishedRunTtlMs === undefined ? {} : { finishedRunTtlMs }) });
    await store.start();
    instance.attach('runs', () => store.connected);
    coordinator.register({ component: 'run_store', phase: 'services', run: () => store.stop() });
    return store;
  },
};

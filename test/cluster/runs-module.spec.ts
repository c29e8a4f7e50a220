/**
 * `RunsModule` with `PostgresRunStoreProvider` (spec 08 §4) in a Nest application context on a real
 * database: the `RunStore` token is bound to a started Postgres store on `ClusterModule`'s instance,
 * which reports it in readiness and stops it in the shutdown coordinator's `services` step.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClusterInstance } from '../../src/cluster/cluster-instance';
import { ClusterModule } from '../../src/cluster/cluster.module';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { PostgresRunStore } from '../../src/runner/runs/stores/postgres/postgres-run-store';
import { PostgresRunStoreProvider } from '../../src/runner/runs/stores/postgres/postgres-run-store.provider';
import { RunStore } from '../../src/runner/runs/stores/run-store';
import { RegistryRunnerDouble } from '../../src/runner/runs/testing/registry-runner-double';
import { openDatabaseHarness, useHarness } from '../support/database-harness';

describe('RunsModule with PostgresRunStoreProvider (spec 08 §4)', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  async function compile(imports: NonNullable<Parameters<typeof Test.createTestingModule>[0]['imports']>): Promise<TestingModule> {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    // closed with the harness, before its database is dropped
    harness().track(() => moduleRef.close());
    // the store starts in onModuleInit, after the app's one start-up schema check
    await moduleRef.init();
    return moduleRef;
  }

  const database = () => TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(harness().database.url));

  it('binds RunStore to a started PostgresRunStore that the registry uses and readiness reports as runs', async () => {
    const moduleRef = await compile([database(), ClusterModule.forRoot({ instanceId: 'node-a' }), RunsModule.forRoot({ runners: [new RegistryRunnerDouble()], store: PostgresRunStoreProvider })]);
    const store = moduleRef.get<PostgresRunStore>(RunStore);
    expect(store).toBeInstanceOf(PostgresRunStore);
    expect(store.connected).toBe(true);
    expect(store.instanceId).toBe('node-a');
    expect(moduleRef.get(ClusterInstance).health()).toMatchObject({ runs_connected: true });

    const { run_id } = await moduleRef.get(RunRegistry).start({ agent: 'assistant', userId: 'u-1', message: 'hi' });
    expect(await store.get(run_id)).toMatchObject({ run_id, status: 'pending' });
  });

  it('the shutdown coordinator stops the store: readiness reports it disconnected and operations fail with cluster_unavailable {reason: stopped}', async () => {
    const moduleRef = await compile([database(), ClusterModule.forRoot({ instanceId: 'node-a' }), RunsModule.forRoot({ runners: [new RegistryRunnerDouble()], store: PostgresRunStoreProvider })]);
    const store = moduleRef.get<PostgresRunStore>(RunStore);
    const instance = moduleRef.get(ClusterInstance);

    await moduleRef.close();

    expect(store.connected).toBe(false);
    expect(instance.health()).toMatchObject({ runs_connected: false });
    await expect(store.get('run-gone')).rejects.toMatchObject({ code: 'cluster_unavailable', details: { reason: 'stopped' } });
  });
});

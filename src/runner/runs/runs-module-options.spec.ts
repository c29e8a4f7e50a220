import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClusterInstance } from '../../cluster/cluster-instance';
import { RunRegistry } from './run-registry';
import { RunnerError } from '../runner.errors';
import { resolveRunsModuleOptions } from './runs-module-options';
import { RunsModule } from './runs.module';
import { InMemoryRunStore } from './stores/in-memory-run-store';
import { PostgresRunStoreProvider } from './stores/postgres/postgres-run-store.provider';
import { RunStore } from './stores/run-store';
import { RegistryRunnerDouble } from './testing/registry-runner-double';

function failure(work: () => unknown): { code: string; details?: unknown } {
  try {
    work();
  } catch (error) {
    if (RunnerError.isRunnerError(error)) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('expected a RunnerError');
}

describe('RunsModule options (spec 03 §10)', () => {
  const runners = [new RegistryRunnerDouble()];

  it('passes the registry settings and the runners to the registry', () => {
    const authorizeRun = () => true;
    const resolved = resolveRunsModuleOptions({ runners, registry: { maxRuns: 5, shutdownGraceMs: 0 }, resolvePrincipal: () => ({ id: 'u' }), authorizeRun });
    expect(resolved.registry).toEqual({ runners, maxRuns: 5, shutdownGraceMs: 0 });
    expect(resolved.authorizeRun).toBe(authorizeRun);
    expect(resolved.principals.enabled).toBe(true);
    expect(resolveRunsModuleOptions({ runners }).principals.enabled).toBe(false);
    expect(resolveRunsModuleOptions({ runners, allowAnonymous: true }).principals.enabled).toBe(true);
  });

  it.each([
    ['no runners', {}, { field: 'runners' }],
    ['an unknown key', { runners, extra: 1 }, { field: 'extra' }],
    ['a resolvePrincipal that is no function', { runners, resolvePrincipal: 'alice' }, { field: 'resolvePrincipal' }],
    ['an allowAnonymous that is no boolean', { runners, allowAnonymous: 'yes' }, { field: 'allowAnonymous' }],
    ['an authorizeRun that is no function', { runners, authorizeRun: {} }, { field: 'authorizeRun' }],
    ['the removed resolveUserId', { runners, resolveUserId: () => 'u' }, { field: 'resolveUserId' }],
    ['a registry that is no object', { runners, registry: [] }, { field: 'registry' }],
    ['a bad registry setting', { runners, registry: { maxRuns: 0 } }, { field: 'registry.maxRuns' }],
    ['runners inside registry', { runners, registry: { runners } }, { field: 'registry.runners' }],
    ['two bad settings', { runners, registry: { maxRuns: 0, finishedRunTtlMs: -1 } }, { fields: ['registry.finishedRunTtlMs', 'registry.maxRuns'] }],
  ])('refuses %s with invalid_runner_options', (_what, options, details) => {
    expect(failure(() => resolveRunsModuleOptions(options))).toEqual({ code: 'invalid_runner_options', details });
  });

  it('forRootAsync builds the registry from a factory', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RunsModule.forRootAsync({ useFactory: async () => ({ runners, registry: { maxRuns: 3 } }) })] }).compile();
    const registry = moduleRef.get(RunRegistry);
    expect(registry.getRunner('assistant')).toBe(runners[0]);
    await moduleRef.close();
  });

  it('bad options stop bootstrap with invalid_runner_options', async () => {
    const building = Test.createTestingModule({ imports: [RunsModule.forRoot({ runners: [{}] as never })] }).compile();
    await expect(building).rejects.toMatchObject({ code: 'invalid_runner_options', details: { field: 'runners' } });
  });

  it('forRootAsync without exactly one factory is refused when declared', () => {
    expect(failure(() => RunsModule.forRootAsync({} as never))).toEqual({ code: 'invalid_runner_options', details: { field: 'forRootAsync' } });
  });

  describe('the RunStore token', () => {
    const compile = async (module: ReturnType<typeof RunsModule.forRoot>, extra: unknown[] = []) => Test.createTestingModule({ imports: [...(extra as never[]), module] }).compile();

    it('is bound to a new InMemoryRunStore by default, the one the registry keeps its runs in', async () => {
      const moduleRef = await compile(RunsModule.forRoot({ runners }));
      const store = moduleRef.get<RunStore>(RunStore);
      expect(store).toBeInstanceOf(InMemoryRunStore);
      const { run_id } = await moduleRef.get(RunRegistry).start({ agent: 'assistant', userId: 'u-1', message: 'hi' });
      expect(await store.get(run_id)).toMatchObject({ run_id, status: 'pending' });
      await moduleRef.close();
    });

    it('is bound to registry.store when one is given', async () => {
      const given = new InMemoryRunStore();
      const moduleRef = await compile(RunsModule.forRoot({ runners, registry: { store: given } }));
      expect(moduleRef.get(RunStore)).toBe(given);
      await moduleRef.close();
    });

    it('is bound by the store provider declared beside forRoot or forRootAsync', async () => {
      const given = new InMemoryRunStore();
      for (const module of [
        RunsModule.forRoot({ runners, store: { provide: RunStore, useValue: given } }),
        RunsModule.forRootAsync({ useFactory: () => ({ runners }), store: { provide: RunStore, useFactory: () => given } }),
      ]) {
        const moduleRef = await compile(module);
        expect(moduleRef.get(RunStore)).toBe(given);
        const { run_id } = await moduleRef.get(RunRegistry).start({ agent: 'assistant', userId: 'u-1', message: 'hi' });
        expect(await given.get(run_id)).toMatchObject({ run_id });
        await moduleRef.close();
      }
    });

    it.each([
      ['the former string', 'postgres'],
      ['a provider of another token', { provide: 'RUN_STORE', useValue: new InMemoryRunStore() }],
      ['a store instance', new InMemoryRunStore()],
    ])('a store that is not a RunStore provider (%s) stops bootstrap with invalid_runner_options {field: store}', async (_what, store) => {
      await expect(compile(RunsModule.forRoot({ runners, store } as never))).rejects.toMatchObject({ code: 'invalid_runner_options', details: { field: 'store' } });
      expect(failure(() => RunsModule.forRootAsync({ useFactory: () => ({ runners }), store } as never))).toEqual({ code: 'invalid_runner_options', details: { field: 'store' } });
    });

    it('a forRootAsync factory may repeat the declared store but not change it', async () => {
      const provider = { provide: RunStore, useValue: new InMemoryRunStore() };
      const repeated = await compile(RunsModule.forRootAsync({ useFactory: () => ({ runners, store: provider }) as never, store: provider }));
      expect(repeated.get(RunStore)).toBe(provider.useValue);
      await repeated.close();
      await expect(compile(RunsModule.forRootAsync({ useFactory: () => ({ runners, store: provider }) as never }))).rejects.toMatchObject({
        code: 'invalid_runner_options',
        details: { field: 'store' },
      });
    });

    it('PostgresRunStoreProvider without ClusterModule, or beside a registry.store, stops bootstrap with invalid_runner_options {field: store}', async () => {
      await expect(compile(RunsModule.forRoot({ runners, store: PostgresRunStoreProvider }))).rejects.toMatchObject({ code: 'invalid_runner_options', details: { field: 'store' } });
      @Global()
      @Module({ providers: [{ provide: ClusterInstance, useValue: {} }], exports: [ClusterInstance] })
      class StubClusterModule {}
      await expect(compile(RunsModule.forRoot({ runners, registry: { store: new InMemoryRunStore() }, store: PostgresRunStoreProvider }), [StubClusterModule])).rejects.toMatchObject({
        code: 'invalid_runner_options',
        details: { field: 'store' },
      });
    });
  });
});

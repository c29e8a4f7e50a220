import { Test } from '@nestjs/testing';
import { RunRegistry } from './run-registry';
import { RunnerError } from '../runner.errors';
import { resolveRunsModuleOptions } from './runs-module-options';
import { RunsModule } from './runs.module';
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
    const resolveUserId = () => 'u';
    const resolved = resolveRunsModuleOptions({ runners, registry: { maxRuns: 5, shutdownGraceMs: 0 }, resolveUserId });
    expect(resolved.registry).toEqual({ runners, maxRuns: 5, shutdownGraceMs: 0 });
    expect(resolved.resolveUserId).toBe(resolveUserId);
  });

  it.each([
    ['no runners', {}, { field: 'runners' }],
    ['an unknown key', { runners, extra: 1 }, { field: 'extra' }],
    ['a resolveUserId that is no function', { runners, resolveUserId: 'alice' }, { field: 'resolveUserId' }],
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
});

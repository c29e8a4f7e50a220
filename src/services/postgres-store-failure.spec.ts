import { classifyFailure } from '../database/postgres-failure';
import { postgresStoreFailure } from './postgres-store-failure';

const failure = (error: object) => classifyFailure(error);

describe('postgresStoreFailure (spec 07 §4)', () => {
  it.each([
    ['a lost connection', { code: 'ECONNREFUSED' }],
    ['a server shutdown', { code: '57P01' }],
    ['a statement timeout', { code: '57014' }],
    ['a serialisation failure', { code: '40001' }],
    ['too many connections', { code: '53300' }],
    ['a pool that is gone (no SQLSTATE)', { message: 'Cannot use a pool after calling end on the pool' }],
  ])('%s is an outage: runtime_service_store_unavailable', (_name, error) => {
    expect(postgresStoreFailure('memory', failure(error))).toMatchObject({ code: 'runtime_service_store_unavailable' });
  });

  it('anything else the database refuses is the adapter failing, with the SQLSTATE only', () => {
    const renamed = failure({ code: '42703', message: 'column "secret" does not exist' });
    const artifact = postgresStoreFailure('artifact', renamed);
    expect([artifact.code, artifact.details]).toEqual(['artifact_shard_adapter_failed', { sqlstate: '42703' }]);
    expect(postgresStoreFailure('memory', renamed).code).toBe('memory_shard_adapter_failed');
    expect(JSON.stringify(artifact)).not.toMatch(/secret/);
  });
});

import { EvalServiceError } from '../eval.errors';
import { thrown } from '../../shared/testing/thrown';
import { resolveEvalStoreOptions } from './eval-store-options';

const failure = (options: unknown) => {
  const error = thrown(() => resolveEvalStoreOptions(options), EvalServiceError) as EvalServiceError;
  return { code: error.code, details: error.details };
};

describe('store options (spec 05 §2.1)', () => {
  it('applies the defaults of the table', () => {
    expect(resolveEvalStoreOptions(undefined)).toEqual({
      schema: null,
      tablePrefix: 'agent_runtime_eval_',
      maxSets: 10_000,
      maxJobs: 100_000,
      maxBaselines: 10_000,
      defaultPageLimit: 100,
      maxPageLimit: 1000,
      maxRecordBytes: 16 * 1024 * 1024,
      maxTotalBytes: 1024 * 1024 * 1024,
      maxScopeBytes: 256 * 1024 * 1024,
      defaultPruneLimit: 100,
      maxPruneLimit: 10_000,
      connectRetries: 2,
      statementTimeoutMs: 10_000,
      requireSynchronousStandby: false,
    });
    expect(Object.isFrozen(resolveEvalStoreOptions({}))).toBe(true);
  });

  it('keeps given values and treats undefined as not given', () => {
    const resolved = resolveEvalStoreOptions({ schema: 'tenant_a', tablePrefix: 'billing_eval_', maxJobs: 5, maxPageLimit: 50, maxPruneLimit: 20, statementTimeoutMs: undefined });
    expect(resolved).toMatchObject({ schema: 'tenant_a', tablePrefix: 'billing_eval_', maxJobs: 5, maxPageLimit: 50, defaultPageLimit: 50, maxPruneLimit: 20, defaultPruneLimit: 20, statementTimeoutMs: 10_000 });
  });

  it('accepts the bounds of every range', () => {
    const low = { maxSets: 1, maxJobs: 1, maxBaselines: 1, defaultPageLimit: 1, maxPageLimit: 1, maxRecordBytes: 1, maxTotalBytes: 1, maxScopeBytes: 1, defaultPruneLimit: 1, maxPruneLimit: 1, connectRetries: 0, statementTimeoutMs: 1 };
    expect(resolveEvalStoreOptions(low)).toMatchObject(low);
    const high = {
      maxSets: 1_000_000,
      maxJobs: 10_000_000,
      maxBaselines: 1_000_000,
      defaultPageLimit: 10_000,
      maxPageLimit: 10_000,
      maxRecordBytes: 2 ** 28 - 1,
      maxTotalBytes: Number.MAX_SAFE_INTEGER,
      maxScopeBytes: Number.MAX_SAFE_INTEGER,
      defaultPruneLimit: 100_000,
      maxPruneLimit: 100_000,
      connectRetries: 10,
      statementTimeoutMs: 3_600_000,
    };
    expect(resolveEvalStoreOptions(high)).toMatchObject(high);
  });

  it.each([
    ['schema', 'Tenant'],
    ['tablePrefix', 'a'.repeat(42)],
    ['tablePrefix', '9eval_'],
    ['tablePrefix', 'eval-'],
    ['maxSets', 0],
    ['maxSets', 1_000_001],
    ['maxJobs', 10_000_001],
    ['maxBaselines', 1.5],
    ['maxPageLimit', 10_001],
    ['maxRecordBytes', 2 ** 28],
    ['maxTotalBytes', 0],
    ['maxScopeBytes', Number.MAX_SAFE_INTEGER + 1],
    ['maxPruneLimit', 100_001],
    ['connectRetries', 11],
    ['statementTimeoutMs', 0],
    ['requireSynchronousStandby', 'yes'],
  ])('a bad %s (%p) is invalid_eval_store_options naming it', (option, value) => {
    expect(failure({ [option]: value })).toEqual({ code: 'invalid_eval_store_options', details: { field: option } });
  });

  it('names the first bad option in sorted order', () => {
    expect(failure({ tablePrefix: 'X', maxJobs: 0, connectRetries: -1 })).toEqual({ code: 'invalid_eval_store_options', details: { field: 'connectRetries' } });
  });

  it('a default limit above its maximum names the default', () => {
    expect(failure({ defaultPageLimit: 11, maxPageLimit: 10 })).toEqual({ code: 'invalid_eval_store_options', details: { field: 'defaultPageLimit' } });
    expect(failure({ defaultPruneLimit: 11, maxPruneLimit: 10 })).toEqual({ code: 'invalid_eval_store_options', details: { field: 'defaultPruneLimit' } });
  });

  it('refuses unknown keys with their sorted identifier names, before any bad value', () => {
    expect(failure({ store: {}, maxJob: 1, maxJobs: 0, [Symbol('s')]: 1, 'not an identifier': 1 })).toEqual({
      code: 'unknown_eval_store_options',
      details: { fields: ['maxJob', 'store', 'unknown'] },
    });
  });

  it('refuses what is not a plain object, and never runs a getter', () => {
    for (const options of [null, 'x', [], new (class Options {})(), new Proxy({}, {})]) {
      expect(failure(options)).toEqual({ code: 'invalid_eval_store_options', details: { field: 'options' } });
    }
    let ran = false;
    const options = Object.defineProperty({}, 'maxJobs', { enumerable: true, get: () => ((ran = true), 5) });
    expect(failure(options)).toEqual({ code: 'invalid_eval_store_options', details: { field: 'maxJobs' } });
    expect(ran).toBe(false);
  });

});

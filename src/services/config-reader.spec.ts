import { integerIn } from '../shared/options/option-rules';
import { thrown } from '../shared/testing/thrown';
import { isReadableObject, readAdapterConfig, readConfig } from './config-reader';
import { RuntimeServiceError } from './runtime-service.errors';

const RULES = { maxRouterQueue: integerIn(1), callTimeoutMs: integerIn(1, 600_000) };

describe('readConfig (the bundle configuration through the shared reader)', () => {
  it('reads own data values; undefined is an empty config', () => {
    expect(readConfig({ maxRouterQueue: 3 }, RULES)).toEqual({ ok: true, values: { maxRouterQueue: 3 } });
    expect(readConfig(undefined, RULES)).toEqual({ ok: true, values: {} });
  });

  it('tells a value that is not a plain object apart from an unknown key of the same name', () => {
    for (const value of [null, 'x', 3, [], new Map(), new Proxy({}, {}), Object.create({ inherited: 1 })]) {
      expect(isReadableObject(value)).toBe(false);
      expect(readConfig(value, RULES)).toEqual({ ok: false, failure: 'expected_object' });
    }
    expect(readConfig({ config: 1 }, RULES)).toEqual({ ok: false, failure: 'unknown_keys', fields: ['config'] });
  });

  it('reports unknown keys first, sorted; else the known keys whose value fails, accessors included, without calling them', () => {
    expect(readConfig({ zeta: 1, alpha: 2, maxRouterQueue: 0 }, RULES)).toEqual({ ok: false, failure: 'unknown_keys', fields: ['alpha', 'zeta'] });
    const getter = jest.fn(() => 5);
    const withAccessor = Object.defineProperty({ maxRouterQueue: 0 }, 'callTimeoutMs', { get: getter, enumerable: true });
    expect(readConfig(withAccessor, RULES)).toEqual({ ok: false, failure: 'invalid_values', fields: ['callTimeoutMs', 'maxRouterQueue'] });
    expect(getter).not.toHaveBeenCalled();
  });
});

describe('readAdapterConfig', () => {
  const RANGES = { maxResults: [1, 1000], maxQueryBytes: [1, 65_536] } as const;
  const refusal = (raw: unknown) => thrown(() => readAdapterConfig('memory', raw, RANGES), RuntimeServiceError);

  it('gives the keys given', () => {
    expect(readAdapterConfig('memory', { maxResults: 5 }, RANGES).given).toEqual({ maxResults: 5 });
  });

  it('names what failed with the one vocabulary: field or sorted fields, beside kind and reason', () => {
    expect(refusal([]).details).toEqual({ kind: 'memory', reason: 'expected_object', field: 'adapterConfig' });
    expect(refusal({ zeta: 1, adapter: 'x', maxResults: 0 }).details).toEqual({ kind: 'memory', reason: 'adapter_unknown_keys', fields: ['adapter', 'zeta'] });
    expect(refusal({ maxResults: 0, maxQueryBytes: 0 }).details).toEqual({ kind: 'memory', reason: 'adapter_config', field: 'maxQueryBytes', value_range: [1, 65_536] });
    expect(refusal({ maxResults: 0 })).toMatchObject({ code: 'invalid_runtime_service_component_config' });
  });
});

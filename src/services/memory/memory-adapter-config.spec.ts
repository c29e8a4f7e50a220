import { RuntimeServiceError } from '../runtime-service.errors';
import { MEMORY_ADAPTER_CONFIG_DEFAULTS, MEMORY_ADAPTER_CONFIG_RANGES, resolveMemoryAdapterConfig } from './memory-adapter-config';

const MIB = 1024 * 1024;

function failure(adapter: 'in_memory' | 'postgres', raw: unknown): { code: string; details: unknown } {
  try {
    resolveMemoryAdapterConfig(adapter, raw);
  } catch (error) {
    expect(RuntimeServiceError.isRuntimeServiceError(error)).toBe(true);
    const { code, details } = error as RuntimeServiceError;
    return { code, details };
  }
  throw new Error('expected a throw');
}

describe('§1.3 memory adapterConfig', () => {
  it('applies the defaults of the table', () => {
    expect(resolveMemoryAdapterConfig('in_memory', undefined)).toEqual({
      maxContentBytes: 65_536,
      maxMetadataBytes: 16_384,
      maxMetadataDepth: 16,
      maxMetadataNodes: 1000,
      maxQueryBytes: 4096,
      maxResults: 20,
      maxResultBytes: MIB,
      maxEventsPerRequest: 1000,
      maxEntries: 100_000,
      maxTotalBytes: 256 * MIB,
    });
    const postgres = resolveMemoryAdapterConfig('postgres', {});
    expect(postgres).not.toHaveProperty('maxEntries');
    expect(postgres).not.toHaveProperty('maxTotalBytes');
    expect(Object.isFrozen(postgres)).toBe(true);
  });

  it('keeps given values', () => {
    expect(resolveMemoryAdapterConfig('postgres', { maxResults: 1000, maxQueryBytes: 1 })).toMatchObject({ maxResults: 1000, maxQueryBytes: 1 });
  });

  it('refuses maxContentBytes 0 with its range', () => {
    expect(failure('in_memory', { maxContentBytes: 0 })).toEqual({
      code: 'invalid_runtime_service_component_config',
      details: { kind: 'memory', reason: 'adapter_config', field: 'maxContentBytes', value_range: [1, 1_048_576] },
    });
  });

  it.each(Object.entries(MEMORY_ADAPTER_CONFIG_RANGES))('accepts both ends of %s and refuses just outside them and non-integers', (option, [min, max]) => {
    const adapter = option === 'maxEntries' || option === 'maxTotalBytes' ? 'in_memory' : 'postgres';
    expect(resolveMemoryAdapterConfig('in_memory', { [option]: min })[option as keyof typeof MEMORY_ADAPTER_CONFIG_DEFAULTS]).toBe(min);
    expect(resolveMemoryAdapterConfig('in_memory', { [option]: max })[option as keyof typeof MEMORY_ADAPTER_CONFIG_DEFAULTS]).toBe(max);
    for (const bad of [min - 1, max + 1, min + 0.5, String(min), null]) {
      expect(failure(adapter, { [option]: bad }).details).toEqual({ kind: 'memory', reason: 'adapter_config', field: option, value_range: [min, max] });
    }
  });

  it('has the ranges of the table', () => {
    expect(MEMORY_ADAPTER_CONFIG_RANGES).toEqual({
      maxContentBytes: [1, MIB],
      maxMetadataBytes: [1, MIB],
      maxMetadataDepth: [1, 64],
      maxMetadataNodes: [1, 50_000],
      maxQueryBytes: [1, 65_536],
      maxResults: [1, 1000],
      maxResultBytes: [1, 16 * MIB],
      maxEventsPerRequest: [1, 10_000],
      maxEntries: [1, 10_000_000],
      maxTotalBytes: [1, 16 * 1024 * MIB],
    });
  });

  it('refuses unknown keys sorted; the in-memory quotas are unknown to postgres; `adapter` is unknown too', () => {
    expect(failure('in_memory', { zeta: 1, adapter: 'postgres' })).toEqual({
      code: 'invalid_runtime_service_component_config',
      details: { kind: 'memory', reason: 'adapter_unknown_keys', fields: ['adapter', 'zeta'] },
    });
    expect(failure('postgres', { maxEntries: 10, maxTotalBytes: 10 }).details).toEqual({ kind: 'memory', reason: 'adapter_unknown_keys', fields: ['maxEntries', 'maxTotalBytes'] });
  });

  it('refuses a value that is not a plain object, and an accessor without calling it', () => {
    for (const raw of [null, 'x', [], new Map(), new Proxy({}, {})]) {
      expect(failure('in_memory', raw).details).toEqual({ kind: 'memory', reason: 'expected_object', field: 'adapterConfig' });
    }
    const getter = jest.fn(() => 10);
    const raw = Object.defineProperty({}, 'maxResults', { get: getter, enumerable: true });
    expect(failure('in_memory', raw).details).toEqual({ kind: 'memory', reason: 'adapter_config', field: 'maxResults', value_range: [1, 1000] });
    expect(getter).not.toHaveBeenCalled();
  });
});

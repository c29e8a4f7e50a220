import { RuntimeServiceError } from '../runtime-service.errors';
import { resolveArtifactAdapterConfig, type ArtifactAdapterKind } from './artifact-adapter-config';

const MIB = 1024 * 1024;

function failure(adapter: ArtifactAdapterKind, raw: unknown): unknown {
  try {
    resolveArtifactAdapterConfig(adapter, raw);
  } catch (error) {
    expect(RuntimeServiceError.isRuntimeServiceError(error)).toBe(true);
    const { code, details } = error as RuntimeServiceError;
    expect(code).toBe('invalid_runtime_service_component_config');
    return details;
  }
  throw new Error('expected a refusal');
}

const range = (field: string, valueRange: number[]) => ({ kind: 'artifact', reason: 'adapter_config', field, value_range: valueRange });

describe('resolveArtifactAdapterConfig (spec 07 §2)', () => {
  it('applies the defaults of each adapter and freezes the result', () => {
    const memory = resolveArtifactAdapterConfig('in_memory', undefined);
    expect(memory).toEqual({
      maxArtifactBytes: 64 * MIB,
      maxScopeBytes: 256 * MIB,
      maxTotalBytes: 512 * MIB,
      maxScopeArtifacts: 25_000,
      maxTotalArtifacts: 100_000,
      maxPageLimit: 1000,
      legacyListLimit: 1000,
    });
    expect(Object.isFrozen(memory)).toBe(true);
    expect(resolveArtifactAdapterConfig('postgres', {})).toEqual({ maxArtifactBytes: 8 * MIB, maxPageLimit: 1000, legacyListLimit: 1000 });
    expect(resolveArtifactAdapterConfig('filesystem', { maxArtifactBytes: undefined })).toEqual({
      maxArtifactBytes: 64 * MIB,
      maxPageLimit: 1000,
      legacyListLimit: 1000,
      maxScanEntries: 10_000,
      recoveryGraceMs: 300_000,
    });
  });

  it('takes given values, and a resolved config resolves to itself', () => {
    const given = resolveArtifactAdapterConfig('filesystem', { maxScanEntries: 3, maxPageLimit: 2, legacyListLimit: 3, recoveryGraceMs: 0 });
    expect(given).toMatchObject({ maxScanEntries: 3, maxPageLimit: 2, legacyListLimit: 3, recoveryGraceMs: 0 });
    expect(resolveArtifactAdapterConfig('filesystem', given)).toEqual(given);
  });

  it('refuses keys of another adapter and unknown keys, sorted, with adapter_unknown_keys', () => {
    expect(failure('postgres', { maxScopeBytes: 1, zeta: 1, maxScanEntries: 5 })).toEqual({ kind: 'artifact', reason: 'adapter_unknown_keys', fields: ['maxScanEntries', 'maxScopeBytes', 'zeta'] });
    expect(failure('in_memory', { recoveryGraceMs: 1 })).toEqual({ kind: 'artifact', reason: 'adapter_unknown_keys', field: 'recoveryGraceMs' });
    expect(failure('filesystem', { adapter: 'postgres' })).toEqual({ kind: 'artifact', reason: 'adapter_unknown_keys', field: 'adapter' });
  });

  it('refuses a value outside its own range with its value_range', () => {
    expect(failure('in_memory', { maxArtifactBytes: 0 })).toEqual(range('maxArtifactBytes', [1, 1024 * MIB]));
    expect(failure('postgres', { maxArtifactBytes: 128 * MIB + 1 })).toEqual(range('maxArtifactBytes', [1, 128 * MIB]));
    expect(failure('postgres', { maxPageLimit: 1.5 })).toEqual(range('maxPageLimit', [1, 10_000]));
    expect(failure('postgres', { legacyListLimit: '10' })).toEqual(range('legacyListLimit', [1, 100_000]));
    expect(failure('filesystem', { maxScanEntries: 2 })).toEqual(range('maxScanEntries', [3, 1_000_000]));
    expect(failure('filesystem', { recoveryGraceMs: -1 })).toEqual(range('recoveryGraceMs', [0, 604_800_000]));
    expect(failure('in_memory', { maxTotalArtifacts: Number.NaN })).toEqual(range('maxTotalArtifacts', [1, 10_000_000]));
  });

  it('refuses a value breaking a rule between keys with the range the other keys allow', () => {
    expect(failure('in_memory', { maxScopeBytes: 1024 })).toEqual(range('maxScopeBytes', [64 * MIB, 512 * MIB]));
    expect(failure('in_memory', { maxArtifactBytes: 300 * MIB })).toEqual(range('maxArtifactBytes', [1, 256 * MIB]));
    expect(failure('in_memory', { maxTotalBytes: 100 * MIB })).toEqual(range('maxTotalBytes', [256 * MIB, 16 * 1024 * MIB]));
    expect(failure('in_memory', { maxScopeArtifacts: 100_001 })).toEqual(range('maxScopeArtifacts', [1, 100_000]));
    expect(failure('in_memory', { maxTotalArtifacts: 10 })).toEqual(range('maxTotalArtifacts', [25_000, 10_000_000]));
    expect(failure('filesystem', { maxPageLimit: 20, maxScanEntries: 10 })).toEqual(range('maxPageLimit', [1, 10]));
    expect(failure('filesystem', { legacyListLimit: 20_000 })).toEqual(range('legacyListLimit', [1, 10_000]));
    expect(failure('filesystem', { maxScanEntries: 999 })).toEqual(range('maxScanEntries', [1000, 1_000_000]));
    expect(resolveArtifactAdapterConfig('in_memory', { maxArtifactBytes: 10, maxScopeBytes: 10, maxTotalBytes: 10, maxScopeArtifacts: 1, maxTotalArtifacts: 1 })).toMatchObject({ maxTotalBytes: 10 });
  });

  it('refuses a value that is not a plain object, and an accessor without calling it', () => {
    expect(failure('postgres', [])).toEqual({ kind: 'artifact', reason: 'expected_object', field: 'adapterConfig' });
    expect(failure('postgres', 'x')).toEqual({ kind: 'artifact', reason: 'expected_object', field: 'adapterConfig' });
    const getter = jest.fn(() => 5);
    expect(failure('postgres', Object.defineProperty({}, 'maxPageLimit', { get: getter, enumerable: true }))).toEqual(range('maxPageLimit', [1, 10_000]));
    expect(getter).not.toHaveBeenCalled();
  });
});

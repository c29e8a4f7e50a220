import { RuntimeServiceError } from '../runtime-service.errors';
import { thrown } from '../../shared/testing/thrown';
import { compileServiceProfile, readProfileOptions } from './service-profile';

const failure = (profile: unknown, config: unknown) => {
  try {
    compileServiceProfile(profile, config);
  } catch (error) {
    expect(RuntimeServiceError.isRuntimeServiceError(error)).toBe(true);
    return { code: (error as RuntimeServiceError).code, details: (error as RuntimeServiceError).details };
  }
  throw new Error('expected a refusal');
};

describe('profile compilation (spec 07 §3)', () => {
  it('refuses an unknown profile', () => {
    for (const profile of ['durable', 'EPHEMERAL_LOCAL', '', 1, undefined, null]) expect(failure(profile, {})).toEqual({ code: 'unknown_runtime_service_profile', details: undefined });
  });

  it('refuses a config that is not a plain object', () => {
    for (const config of [null, [], 'x', 3, new Map(), new Proxy({}, {})]) {
      expect(failure('ephemeral_local', config)).toEqual({ code: 'invalid_runtime_service_profile_config', details: { profile: 'ephemeral_local', reason: 'expected_object' } });
    }
  });

  it('names unknown top-level keys sorted, per profile', () => {
    expect(failure('ephemeral_local', { zeta: 1, artifactRoot: '/tmp', memoryOutbox: {} }).details).toEqual({ profile: 'ephemeral_local', reason: 'unknown_keys', fields: ['artifactRoot', 'memoryOutbox', 'zeta'] });
    expect(failure('durable_local', { sessions: {}, artifact: {} }).details).toEqual({ profile: 'durable_local', reason: 'unknown_keys', field: 'sessions' });
    expect(failure('disabled', { artifact: {} }).details).toEqual({ profile: 'disabled', reason: 'unknown_keys', field: 'artifact' });
    const getter = jest.fn(() => ({}));
    expect(failure('durable_local', Object.defineProperty({}, 'artifact', { get: getter, enumerable: true })).details).toEqual({ profile: 'durable_local', reason: 'unknown_keys', field: 'artifact' });
    expect(getter).not.toHaveBeenCalled();
  });

  it('artifactRoot: relative is must_be_absolute; empty, non-string, NUL or a lone surrogate is invalid', () => {
    expect(failure('durable_local', { artifactRoot: 'data/artifacts' }).details).toEqual({ profile: 'durable_local', reason: 'artifact_root', detail: 'must_be_absolute' });
    for (const root of ['', 7, '/tmp/a\u0000b', '/tmp/\ud800']) expect(failure('durable_local', { artifactRoot: root }).details).toEqual({ profile: 'durable_local', reason: 'artifact_root', detail: 'invalid' });
  });

  it('probeIntervalMs is an integer 100..60000', () => {
    for (const value of [99, 60_001, 1.5, '1000']) expect(failure('durable_local', { probeIntervalMs: value }).details).toEqual({ profile: 'durable_local', reason: 'probe_interval_ms' });
  });

  it('component keys: adapter is refused as unknown, options are range-checked', () => {
    expect(failure('ephemeral_local', { artifact: { adapter: 'postgres' } })).toEqual({ code: 'invalid_runtime_service_component_config', details: { kind: 'artifact', reason: 'unknown_keys', field: 'adapter' } });
    expect(failure('ephemeral_local', { memory: 'big' }).details).toEqual({ kind: 'memory', reason: 'expected_object' });
    expect(failure('durable_local', { memory: { maxActiveScopes: 0 } }).details).toEqual({ kind: 'memory', reason: 'component_config', field: 'maxActiveScopes' });
    expect(failure('durable_local', { artifact: { idleScopeTimeoutMs: 86_400_001 } }).details).toEqual({ kind: 'artifact', reason: 'component_config', field: 'idleScopeTimeoutMs' });
    expect(failure('durable_local', { artifact: { callTimeoutMs: 600_001 } }).details).toEqual({ kind: 'artifact', reason: 'component_config', field: 'callTimeoutMs' });
    expect(failure('durable_local', { artifact: { maxRouterQueue: -1 } }).details).toEqual({ kind: 'artifact', reason: 'component_config', field: 'maxRouterQueue' });
    expect(failure('durable_local', { memory: { maxRouterQueue: 0, maxActiveScopes: 0 } }).details).toEqual({ kind: 'memory', reason: 'component_config', fields: ['maxActiveScopes', 'maxRouterQueue'] });
    expect(failure('durable_local', { memory: { zeta: 1, maxActiveScopes: 0 } }).details).toEqual({ kind: 'memory', reason: 'unknown_keys', field: 'zeta' });
  });

  it('adapter configs and outbox options are checked at compilation', () => {
    expect(failure('ephemeral_local', { memory: { adapterConfig: { maxContentBytes: 0 } } })).toEqual({
      code: 'invalid_runtime_service_component_config',
      details: { kind: 'memory', reason: 'adapter_config', field: 'maxContentBytes', value_range: [1, 1048576] },
    });
    expect(failure('durable_local', { artifact: { adapterConfig: { maxScanEntries: 10 } } }).details).toEqual({ kind: 'artifact', reason: 'adapter_unknown_keys', field: 'maxScanEntries' });
    expect(failure('durable_local', { memoryOutbox: { bogus: 1 } })).toEqual({ code: 'invalid_memory_outbox_config', details: { field: 'bogus' } });
    expect(failure('durable_local', { memoryOutbox: { pollIntervalMs: 0 } }).code).toBe('invalid_memory_outbox_poll_interval');
    expect(failure('durable_local', { memoryOutbox: { maxAttempts: 3, defaultMaxAttempts: 4 } }).code).toBe('memory_outbox_runner_max_attempts_exceeded');
    expect(failure('durable_local', { memoryOutbox: { defaultMaxAttempts: 11 } }).code).toBe('memory_outbox_runner_max_attempts_exceeded');
  });

  it('chooses the adapters and the routing from the profile alone, with the spec defaults', () => {
    const ephemeral = compileServiceProfile('ephemeral_local', undefined);
    expect(ephemeral).toMatchObject({ profile: 'ephemeral_local', routing: 'shared', artifactAdapter: 'in_memory', memoryAdapter: 'in_memory', artifactRoot: null });
    expect(ephemeral).toMatchObject({ artifact: { maxActiveScopes: 1024, maxRouterQueue: 256, idleScopeTimeoutMs: 60_000, callTimeoutMs: 30_000 }, memory: { callTimeoutMs: 5_000 } });
    expect(compileServiceProfile('durable_local', {})).toMatchObject({ routing: 'exact_scope', artifactAdapter: 'postgres', memoryAdapter: 'postgres', probeIntervalMs: 1000 });
    expect(compileServiceProfile('durable_local', { artifactRoot: '/var/lib/artifacts' })).toMatchObject({ artifactAdapter: 'filesystem', artifactRoot: '/var/lib/artifacts' });
    expect(compileServiceProfile('disabled', undefined)).toEqual({ profile: 'disabled' });
  });

  it('reads the module options {profile, config} without running a getter; other keys are ignored', () => {
    const config = { artifact: {} };
    expect(readProfileOptions({ profile: 'ephemeral_local', config, other: 1 })).toEqual({ profile: 'ephemeral_local', config });
    expect(readProfileOptions(undefined)).toEqual({ profile: undefined, config: undefined });
    for (const options of [null, 'x', [], new Proxy({}, {})]) {
      expect(thrown(() => readProfileOptions(options), RuntimeServiceError)).toMatchObject({ code: 'invalid_runtime_service_profile_config', details: { field: 'options' } });
    }
    const getter = jest.fn(() => 'durable_local');
    const options = Object.defineProperty({}, 'profile', { get: getter, enumerable: true });
    expect(thrown(() => readProfileOptions(options), RuntimeServiceError)).toMatchObject({ code: 'invalid_runtime_service_profile_config', details: { field: 'profile' } });
    expect(getter).not.toHaveBeenCalled();
  });
});

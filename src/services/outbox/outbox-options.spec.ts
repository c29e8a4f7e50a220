import { thrown } from '../../shared/testing/thrown';
import { RuntimeServiceError } from '../runtime-service.errors';
import { resolveMemoryOutboxOptions } from './outbox-options';

const failure = (value: unknown) => thrown(() => resolveMemoryOutboxOptions(value), RuntimeServiceError);

describe('§6.2 memory outbox options', () => {
  it('applies the defaults of the spec', () => {
    expect(resolveMemoryOutboxOptions(undefined)).toEqual({
      maxActiveGlobal: 10_000,
      maxActivePerScope: 1000,
      maxActiveBytesGlobal: 256 * 1024 * 1024,
      maxActiveBytesPerScope: 64 * 1024 * 1024,
      maxEventsPerJob: 5000,
      maxEventBytes: 256 * 1024,
      maxJobBytes: 16 * 1024 * 1024,
      maxAttempts: 10,
      defaultMaxAttempts: 5,
      backoffBaseMs: 250,
      backoffMaxMs: 30_000,
      leaseMs: 30_000,
      terminalRetentionMs: 7 * 24 * 3600 * 1000,
      maxTerminalRecords: 100_000,
      maxPruneBatch: 1000,
      maxClaimScan: 1000,
      pollIntervalMs: 500,
      startupTimeoutMs: 5000,
      requireSynchronousStandby: false,
      processor: { concurrency: 4 },
      registry: { hydrationTimeoutMs: 5000 },
    });
    expect(Object.isFrozen(resolveMemoryOutboxOptions({}).processor)).toBe(true);
  });

  it('keeps given values', () => {
    const o = resolveMemoryOutboxOptions({ maxAttempts: 3, defaultMaxAttempts: 2, leaseMs: 50, processor: { concurrency: 64 }, registry: { hydrationTimeoutMs: 1 } });
    expect(o).toMatchObject({ maxAttempts: 3, defaultMaxAttempts: 2, leaseMs: 50, processor: { concurrency: 64 }, registry: { hydrationTimeoutMs: 1 } });
  });

  it('unknown keys → invalid_memory_outbox_config with the keys, sorted', () => {
    const error = failure({ zeta: 1, alpha: 2, leaseMs: 100 });
    expect(error.code).toBe('invalid_memory_outbox_config');
    expect(error.details).toEqual({ fields: ['alpha', 'zeta'] });
  });

  it('a bad value → invalid_memory_outbox_config naming the option', () => {
    expect(failure({ maxActiveGlobal: 0 }).details).toEqual({ field: 'maxActiveGlobal' });
    expect(failure({ leaseMs: 1.5 }).details).toEqual({ field: 'leaseMs' });
    expect(failure({ requireSynchronousStandby: 'yes' }).details).toEqual({ field: 'requireSynchronousStandby' });
    expect(failure({ maxAttempts: 11 }).code).toBe('invalid_memory_outbox_config');
    expect(failure('options').details).toEqual({ field: 'memoryOutbox' });
  });

  it('every failing name of one code is reported together, sorted', () => {
    expect(failure({ zeta: 1, leaseMs: 0, maxAttempts: 11 }).details).toEqual({ fields: ['leaseMs', 'maxAttempts', 'zeta'] });
    expect(failure({ processor: { concurrency: 0, threads: 2 } }).details).toEqual({ fields: ['processor.concurrency', 'processor.threads'] });
  });

  it('names of several codes: invalid_memory_outbox_config first, then the poll interval, then the registry', () => {
    expect(failure({ pollIntervalMs: 0, registry: [], leaseMs: 0 })).toMatchObject({ code: 'invalid_memory_outbox_config', details: { field: 'leaseMs' } });
    expect(failure({ pollIntervalMs: 0, registry: [] })).toMatchObject({ code: 'invalid_memory_outbox_poll_interval', details: { field: 'pollIntervalMs' } });
    expect(failure({ registry: [] })).toMatchObject({ code: 'invalid_memory_outbox_registry_options', details: { field: 'registry' } });
  });

  it('pollIntervalMs 0 → invalid_memory_outbox_poll_interval', () => {
    expect(failure({ pollIntervalMs: 0 })).toMatchObject({ code: 'invalid_memory_outbox_poll_interval', details: { field: 'pollIntervalMs' } });
    expect(resolveMemoryOutboxOptions({ pollIntervalMs: 1 }).pollIntervalMs).toBe(1);
  });

  it('registry: unknown keys or a bad value → invalid_memory_outbox_registry_options', () => {
    const unknown = failure({ registry: { hydrationTimeoutMs: 10, other: true } });
    expect(unknown.code).toBe('invalid_memory_outbox_registry_options');
    expect(unknown.details).toEqual({ field: 'registry.other' });
    expect(failure({ registry: { hydrationTimeoutMs: 0 } })).toMatchObject({ code: 'invalid_memory_outbox_registry_options', details: { field: 'registry.hydrationTimeoutMs' } });
    expect(failure({ registry: [] }).code).toBe('invalid_memory_outbox_registry_options');
  });

  it('processor.concurrency is 1..64', () => {
    expect(failure({ processor: { concurrency: 0 } }).details).toEqual({ field: 'processor.concurrency' });
    expect(failure({ processor: { concurrency: 65 } }).details).toEqual({ field: 'processor.concurrency' });
    expect(failure({ processor: { threads: 2 } }).details).toEqual({ field: 'processor.threads' });
  });

  it('defaultMaxAttempts above maxAttempts → memory_outbox_runner_max_attempts_exceeded', () => {
    expect(failure({ maxAttempts: 3, defaultMaxAttempts: 4 })).toMatchObject({ code: 'memory_outbox_runner_max_attempts_exceeded', details: { field: 'defaultMaxAttempts', max_attempts: 3 } });
    expect(resolveMemoryOutboxOptions({ maxAttempts: 3 }).defaultMaxAttempts).toBe(3);
    // 11 is above the default cap of 10: the cross-check answers, not a range rule (issue 23 item 7)
    expect(failure({ defaultMaxAttempts: 11 })).toMatchObject({ code: 'memory_outbox_runner_max_attempts_exceeded', details: { field: 'defaultMaxAttempts', max_attempts: 10 } });
    expect(failure({ defaultMaxAttempts: 0 })).toMatchObject({ code: 'invalid_memory_outbox_config', details: { field: 'defaultMaxAttempts' } });
  });

  it('backoffMaxMs below backoffBaseMs is refused', () => {
    expect(failure({ backoffBaseMs: 100, backoffMaxMs: 99 }).details).toEqual({ field: 'backoffMaxMs' });
    expect(resolveMemoryOutboxOptions({ backoffBaseMs: 40_000 }).backoffMaxMs).toBe(40_000);
  });

  it('runs no getter of the options', () => {
    const options = Object.defineProperty({}, 'leaseMs', { enumerable: true, get: () => { throw new Error('getter ran'); } });
    expect(failure(options).details).toEqual({ field: 'leaseMs' });
  });
});

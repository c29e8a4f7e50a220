import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import { useHarness } from '../support/database-harness';
import { hang, openOutboxHarness, PARKED, RecordingTarget, sessionEvent } from '../support/outbox-harness';
import { eventually } from '../support/eventually';
import { rejected } from '../../src/shared/testing/rejected';

const SCOPE = Object.freeze({ appName: 'app-a', userId: 'user-1' });

const rejection = (promise: Promise<unknown>): Promise<RuntimeServiceError> => rejected(promise, RuntimeServiceError);

describe('§6.5 health', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('has exactly the record fields, counts from the global row, and no ids, content or tokens', async () => {
    const target = new RecordingTarget(hang);
    const outbox = await h().started(target, { leaseMs: 60_000 });
    await outbox.enqueue({ ...SCOPE, baseJobId: 'secret-base-id', events: [sessionEvent('secret content')] });
    await eventually(() => target.calls.length === 1);
    const parked = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    await parked.enqueue({ ...SCOPE, baseJobId: 'other-id', events: [sessionEvent('more')], adapterId: 'nobody' });
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_jobs SET due_at_ms = due_at_ms - 5000 WHERE job_id = 'other-id'`);
    const before = await h().db.sql<{ updated_at_ms: string }>(`SELECT updated_at_ms FROM agent_runtime_memory_outbox_usage WHERE usage_key = 'health'`);
    const record = await outbox.health();
    const [global] = await h().usage();
    expect(record).toEqual({
      status: 'ready',
      persistence: 'postgres',
      tables: 3,
      registry: 'hydrated',
      active_jobs: 2,
      active_bytes: global.active_bytes,
      terminal_jobs: 0,
      oldest_due_lag_ms: expect.any(Number),
    });
    expect(record.oldest_due_lag_ms).toBeGreaterThanOrEqual(5000);
    expect(Object.isFrozen(record)).toBe(true);
    expect(outbox.lastHealth()).toBe(record);
    const text = JSON.stringify(record);
    const [running] = await h().db.sql<{ lease_token: string }>(`SELECT lease_token FROM agent_runtime_memory_outbox_jobs WHERE lease_token IS NOT NULL`);
    for (const secret of ['secret-base-id', 'other-id', 'secret content', 'app-a', 'user-1', running.lease_token]) expect(text).not.toContain(secret);
    const after = await h().db.sql<{ updated_at_ms: string }>(`SELECT updated_at_ms FROM agent_runtime_memory_outbox_usage WHERE usage_key = 'health'`);
    expect(Number(after[0].updated_at_ms)).toBeGreaterThanOrEqual(Number(before[0].updated_at_ms));
  });

  it('is unavailable while hydrating; start fails when no adapter is registered in time', async () => {
    const outbox = await h().outbox({ registry: { hydrationTimeoutMs: 50 } });
    expect(outbox.lastHealth()).toBeNull();
    expect(await outbox.health()).toMatchObject({ status: 'unavailable', registry: 'hydrating' });
    const error = await rejection(outbox.start());
    expect(error.code).toBe('runtime_service_bundle_start_failed');
    expect(error.details).toEqual({ stage: 'memory_outbox', reason: 'memory_outbox_registry_not_hydrated' });
  });

  it('fails closed when the database is gone, and start fails within startupTimeoutMs', async () => {
    const source = await h().db.dataSource();
    const outbox = await h().outbox({ startupTimeoutMs: 300 }, {}, source);
    outbox.registerAdapter('durable-local-memory-v1', new RecordingTarget());
    await source.destroy();
    expect(await outbox.health()).toMatchObject({ status: 'unavailable', registry: 'hydrated' });
    const error = await rejection(outbox.start());
    expect(error.details).toEqual({ stage: 'memory_outbox', reason: 'runtime_service_dependency_unavailable' });
  });

  it('fails closed when the epochs table is missing', async () => {
    const outbox = await h().started(new RecordingTarget());
    expect((await outbox.health()).status).toBe('ready');
    await h().db.sql('ALTER TABLE agent_runtime_memory_erasure_epochs RENAME TO moved_epochs');
    expect((await outbox.health()).status).toBe('unavailable');
    expect((await rejection(outbox.enqueue({ ...SCOPE, baseJobId: 'b', events: [sessionEvent()] }))).code).toBe('memory_outbox_unavailable');
    await h().db.sql('ALTER TABLE moved_epochs RENAME TO agent_runtime_memory_erasure_epochs');
    expect((await outbox.health()).status).toBe('ready');
  });

  it('with requireSynchronousStandby and no standby the check fails closed', async () => {
    const outbox = await h().outbox({ requireSynchronousStandby: true, startupTimeoutMs: 100 });
    outbox.registerAdapter('durable-local-memory-v1', new RecordingTarget());
    expect(await outbox.health()).toMatchObject({ status: 'unavailable', registry: 'hydrated' });
    expect((await rejection(outbox.start())).details).toEqual({ stage: 'memory_outbox', reason: 'runtime_service_dependency_unavailable' });
    const relaxed = await h().started(new RecordingTarget());
    expect((await relaxed.health()).status).toBe('ready');
  });

  it('a database failure of enqueue is runtime_service_store_unavailable with the SQLSTATE only', async () => {
    const outbox = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    await h().db.sql('ALTER TABLE agent_runtime_memory_outbox_jobs RENAME TO moved_jobs');
    const error = await rejection(outbox.enqueue({ ...SCOPE, baseJobId: 'b', events: [sessionEvent()] }));
    expect(error.code).toBe('runtime_service_store_unavailable');
    expect(error.details).toEqual({ sqlstate: '42P01' });
  });
});

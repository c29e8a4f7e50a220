import { validateSchema } from '../../src/database/schema/schema-validator';
import { canonicalJson } from '../../src/json';
import { MemoryOutbox1764900000002 } from '../../migrations/1764900000002-memory-outbox';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import { OUTBOX_TABLE_SPECS } from '../../src/services/outbox/outbox.schema';
import { scopeUsageKey } from '../../src/services/outbox/outbox-usage';
import { useHarness } from '../support/database-harness';
import { failWith, hang, openOutboxHarness, PARKED, RecordingTarget, sessionEvent } from '../support/outbox-harness';
import { eventually } from '../support/eventually';
import { rejected } from '../../src/shared/testing/rejected';

const SCOPE = Object.freeze({ appName: 'app-a', userId: 'user-1' });

const rejection = (promise: Promise<unknown>): Promise<RuntimeServiceError> => rejected(promise, RuntimeServiceError);

describe('§6.1 the outbox tables', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('the migration creates exactly what OUTBOX_TABLE_SPECS declare, with the global and health usage rows', async () => {
    expect(new MemoryOutbox1764900000002().name).toBe('MemoryOutbox1764900000002');
    expect(await validateSchema(await h().dataSource(), OUTBOX_TABLE_SPECS)).toEqual({ ok: true, mismatches: [] });
    expect(await h().db.sql('SELECT usage_key, active_jobs, active_bytes, terminal_jobs FROM agent_runtime_memory_outbox_usage ORDER BY usage_key')).toEqual([
      { usage_key: 'global', active_jobs: 0, active_bytes: '0', terminal_jobs: 0 },
      { usage_key: 'health', active_jobs: 0, active_bytes: '0', terminal_jobs: 0 },
    ]);
  });

  it('the database refuses rows breaking the checks', async () => {
    const insert = (phase: string, extra: { token?: string | null; attempts?: number; max?: number; finished?: number | null } = {}) =>
      h().db.sql(
        `INSERT INTO agent_runtime_memory_outbox_jobs (job_id, adapter_id, app_name, user_id, epoch, phase, events, event_count, job_bytes, attempts,
           max_attempts, due_at_ms, lease_token, created_at_ms, updated_at_ms, finished_at_ms)
         VALUES ('j-' || md5(random()::text), 'a', 'app', 'u', 0, $1, '[]', 0, 2, $2, $3, 0, $4, 0, 0, $5)`,
        [phase, extra.attempts ?? 0, extra.max ?? 5, extra.token ?? null, extra.finished === undefined ? null : extra.finished],
      );
    const code = (work: Promise<unknown>) => work.then(() => 'ok', (e: { code?: string; constraint?: string }) => e.constraint ?? e.code);
    await expect(code(insert('pending'))).resolves.toBe('ok');
    await expect(code(insert('queued', { finished: 1 }))).resolves.toBe('agent_runtime_memory_outbox_jobs_phase_check');
    await expect(code(insert('running'))).resolves.toBe('agent_runtime_memory_outbox_jobs_lease_check');
    await expect(code(insert('pending', { token: '00000000-0000-4000-8000-000000000000' }))).resolves.toBe('agent_runtime_memory_outbox_jobs_lease_check');
    await expect(code(insert('pending', { attempts: 6 }))).resolves.toBe('agent_runtime_memory_outbox_jobs_attempts_check');
    await expect(code(insert('pending', { attempts: -1 }))).resolves.toBe('agent_runtime_memory_outbox_jobs_attempts_check');
    await expect(code(insert('pending', { max: 11, attempts: 0 }))).resolves.toBe('agent_runtime_memory_outbox_jobs_max_attempts_check');
    await expect(code(insert('pending', { max: 0, attempts: 0 }))).resolves.toBe('agent_runtime_memory_outbox_jobs_max_attempts_check');
    await expect(code(insert('completed'))).resolves.toBe('agent_runtime_memory_outbox_jobs_finished_check');
    await expect(code(insert('pending', { finished: 1 }))).resolves.toBe('agent_runtime_memory_outbox_jobs_finished_check');
    await expect(code(insert('cancelled', { finished: 1 }))).resolves.toBe('ok');
    const usage = (key: string, active: number) =>
      code(h().db.sql(`INSERT INTO agent_runtime_memory_outbox_usage VALUES ($1, $2, 0, 0, 0)`, [key, active]));
    await expect(usage('scope:' + 'a'.repeat(64), -1)).resolves.toBe('agent_runtime_memory_outbox_usage_counters_check');
    await expect(usage('scope:nothex', 0)).resolves.toBe('agent_runtime_memory_outbox_usage_key_check');
    await expect(usage('scope:' + 'a'.repeat(64), 0)).resolves.toBe('ok');
  });
});

describe('§6.3–§6.4 enqueue and delivery', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('an enqueued job reaches completed on attempt 1 and the target received its events', async () => {
    const target = new RecordingTarget();
    const outbox = await h().started(target);
    const events = [sessionEvent('first'), sessionEvent('second')];
    const result = await outbox.enqueue({ ...SCOPE, baseJobId: 'session-1:evt-a:evt-b', events });
    expect(result).toEqual({ job_id: 'session-1:evt-a:evt-b', phase: 'pending', created: true });
    const job = await eventually(async () => {
      const row = await h().job(result.job_id);
      return row?.phase === 'completed' && row;
    });
    expect(job).toMatchObject({ attempts: 1, max_attempts: 5, epoch: 0, lease_token: null, last_error: null, event_count: 2, adapter_id: 'durable-local-memory-v1' });
    expect(job.finished_at_ms).toBeGreaterThanOrEqual(job.created_at_ms);
    expect(target.calls).toHaveLength(1);
    const [call] = target.calls;
    expect(call.scope).toEqual(SCOPE);
    expect(call.events).toEqual(events);
    expect(Object.isFrozen(call.events[0])).toBe(true);
    expect({ epoch: call.epoch, jobId: call.jobId }).toEqual({ epoch: 0, jobId: result.job_id });
    expect(call.call.signal.aborted).toBe(false);
    expect(call.call.timeoutMs).toBeGreaterThan(25_000);
    expect(h().telemetry).toEqual([
      { from: null, to: 'pending', attempts: 0, reason: null },
      { from: 'pending', to: 'running', attempts: 1, reason: null },
      { from: 'running', to: 'completed', attempts: 1, reason: null },
    ]);
    expect(await h().usage()).toEqual([
      { usage_key: 'global', active_jobs: 0, active_bytes: 0, terminal_jobs: 1 },
      { usage_key: scopeUsageKey(SCOPE), active_jobs: 0, active_bytes: 0, terminal_jobs: 1 },
    ]);
  });

  it('a job is claimed soon after its enqueue, not only every pollIntervalMs', async () => {
    const target = new RecordingTarget();
    const outbox = await h().started(target, { pollIntervalMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const startedAt = Date.now();
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-soon', events: [sessionEvent()] });
    await eventually(async () => (await h().job(job_id))?.phase === 'completed', 5000);
    expect(Date.now() - startedAt).toBeLessThan(5000);
  });

  it('the same base id again returns the job, created false, reserving nothing twice', async () => {
    const outbox = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    const events = [sessionEvent()];
    const first = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-1', events });
    const again = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-1', events: [sessionEvent('other'), sessionEvent()] });
    expect(again).toEqual({ job_id: first.job_id, phase: 'pending', created: false });
    const [job] = await h().jobs();
    expect(job.event_count).toBe(1);
    expect(await h().usage()).toEqual(await h().expectedUsage());
    expect((await h().usage())[0]).toMatchObject({ active_jobs: 1, active_bytes: job.job_bytes });
    // another scope's job of that id is not this caller's
    expect((await rejection(outbox.enqueue({ appName: 'app-a', userId: 'user-2', baseJobId: 'b-1', events }))).details).toEqual({ field: 'baseJobId' });
  });

  it('job_bytes is the canonical JSON size of the event list', async () => {
    const outbox = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    const events = [sessionEvent('é'), sessionEvent('b')];
    await outbox.enqueue({ ...SCOPE, baseJobId: 'b-bytes', events });
    const [row] = await h().db.sql<{ job_bytes: number }>('SELECT job_bytes FROM agent_runtime_memory_outbox_jobs');
    expect(row.job_bytes).toBe(Buffer.byteLength(canonicalJson(events), 'utf8'));
  });

  it('claims in (due_at_ms, created_at_ms, job_id) order', async () => {
    const parked = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    const ids = ['j-c', 'j-a', 'j-b', 'j-d'];
    for (const id of ids) await parked.enqueue({ ...SCOPE, baseJobId: id, events: [sessionEvent()] });
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_jobs SET due_at_ms = 1000, created_at_ms = CASE job_id WHEN 'j-d' THEN 1 ELSE 2 END`);
    const target = new RecordingTarget();
    await h().started(target, { processor: { concurrency: 1 } });
    await eventually(() => target.calls.length === 4);
    expect(target.calls.map((c) => c.jobId)).toEqual(['j-d', 'j-a', 'j-b', 'j-c']);
  });

  it('enqueue refuses with memory_outbox_unavailable before start and after stop', async () => {
    const outbox = await h().outbox();
    outbox.registerAdapter('durable-local-memory-v1', new RecordingTarget());
    const request = { ...SCOPE, baseJobId: 'b-x', events: [sessionEvent()] };
    expect((await rejection(outbox.enqueue(request))).code).toBe('memory_outbox_unavailable');
    await outbox.start();
    await outbox.enqueue(request);
    await outbox.stop();
    expect((await rejection(outbox.enqueue({ ...request, baseJobId: 'b-y' }))).code).toBe('memory_outbox_unavailable');
    expect(outbox.lastHealth()?.status).toBe('unavailable');
  });

  it('bad requests get typed errors and write nothing', async () => {
    const outbox = await h().started(new RecordingTarget(), { maxAttempts: 3 }, {}, undefined, PARKED);
    const ok = { ...SCOPE, baseJobId: 'b-1', events: [sessionEvent()] };
    const refusal = async (request: unknown) => {
      const error = await rejection(outbox.enqueue(request as never));
      return [error.code, error.details ?? null];
    };
    expect(await refusal({ ...ok, appName: '' })).toEqual(['invalid_memory_scope', null]);
    expect(await refusal({ ...ok, baseJobId: '' })).toEqual(['invalid_memory_request', { field: 'baseJobId' }]);
    expect(await refusal({ ...ok, baseJobId: 'a\u0000b' })).toEqual(['invalid_memory_request', { field: 'baseJobId' }]);
    expect(await refusal({ ...ok, baseJobId: 'x'.repeat(1025) })).toEqual(['invalid_memory_request', { field: 'baseJobId' }]);
    expect(await refusal({ ...ok, events: [] })).toEqual(['invalid_memory_request', { field: 'events' }]);
    expect(await refusal({ ...ok, events: [1] })).toEqual(['invalid_memory_request', { field: 'events' }]);
    expect(await refusal({ ...ok, events: [{ event_id: 'e', content: 'a\u0000' }] })).toEqual(['invalid_memory_request', { field: 'events' }]);
    expect(await refusal({ ...ok, events: [{ event_id: 'e', content: () => 1 }] })).toEqual(['invalid_memory_request', { field: 'events' }]);
    expect(await refusal({ ...ok, adapterId: 'no spaces' })).toEqual(['invalid_memory_request', { field: 'adapterId' }]);
    expect(await refusal({ ...ok, maxAttempts: 0 })).toEqual(['invalid_memory_request', { field: 'maxAttempts' }]);
    expect(await refusal({ ...ok, maxAttempts: 4 })).toEqual(['memory_outbox_runner_max_attempts_exceeded', { limit: 'maxAttempts' }]);
    expect(await refusal(Object.defineProperty({ ...ok }, 'events', { get: () => [], enumerable: true }))).toEqual(['invalid_memory_request', { field: 'events' }]);
    expect(await refusal(null)).toEqual(['invalid_memory_request', { field: 'request' }]);
    expect(await refusal({ ...ok, baseJobId: '', adapterId: 'no spaces' })).toEqual(['invalid_memory_request', { fields: ['adapterId', 'baseJobId'] }]);
    expect(await h().jobs()).toEqual([]);
    await outbox.enqueue({ ...ok, maxAttempts: 3 });
    expect((await h().jobs())[0].max_attempts).toBe(3);
  });
});

describe('§6.4 retries', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('retries back off with jitter from the injected random source', async () => {
    const target = new RecordingTarget(async (call, index) => {
      if (index < 2) throw new RuntimeServiceError('memory_shard_adapter_failed');
      return { added: call.events.length, duplicates: 0 };
    });
    const draws = [0.5, 0.9];
    const outbox = await h().started(target, { backoffBaseMs: 400, backoffMaxMs: 30_000 }, { random: () => draws.shift() ?? 0 });
    const delays: number[] = [];
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-retry', events: [sessionEvent()] });
    for (const attempts of [1, 2]) {
      const row = await eventually(async () => {
        const r = await h().job(job_id);
        return r?.phase === 'retry_wait' && r.attempts === attempts && r;
      });
      expect(row).toMatchObject({ last_error: 'memory_shard_adapter_failed', lease_token: null, lease_until_ms: 0 });
      delays.push(row.due_at_ms - row.updated_at_ms);
    }
    // 400 · 2^0 + 10 % · 0.5, then 400 · 2^1 + 10 % · 0.9
    expect(delays).toEqual([420, 872]);
    await eventually(async () => (await h().job(job_id))?.phase === 'completed');
    expect((await h().job(job_id))?.attempts).toBe(3);
    expect(target.calls).toHaveLength(3);
    expect(h().telemetry.map((t) => `${t.from}>${t.to}:${t.attempts}:${t.reason}`)).toEqual([
      'null>pending:0:null',
      'pending>running:1:null',
      'running>retry_wait:1:memory_shard_adapter_failed',
      'retry_wait>running:2:null',
      'running>retry_wait:2:memory_shard_adapter_failed',
      'retry_wait>running:3:null',
      'running>completed:3:null',
    ]);
  });

  it('the last attempt failing → failed with last_error a code; a foreign error keeps no text', async () => {
    const target = new RecordingTarget(async () => {
      throw new Error('secret user content');
    });
    const outbox = await h().started(target, { backoffBaseMs: 1, backoffMaxMs: 1 });
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-fail', events: [sessionEvent()], maxAttempts: 2 });
    const row = await eventually(async () => {
      const r = await h().job(job_id);
      return r?.phase === 'failed' && r;
    });
    expect(row).toMatchObject({ attempts: 2, last_error: 'memory_outbox_delivery_failed' });
    expect(row.finished_at_ms).not.toBeNull();
    expect(target.calls).toHaveLength(2);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });

  it('memory_epoch_fenced → cancelled, never retried', async () => {
    const target = new RecordingTarget(failWith('memory_epoch_fenced'));
    const outbox = await h().started(target, { backoffBaseMs: 1, backoffMaxMs: 1 });
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-fenced', events: [sessionEvent()] });
    const row = await eventually(async () => {
      const r = await h().job(job_id);
      return r?.phase === 'cancelled' && r;
    });
    expect(row).toMatchObject({ attempts: 1, last_error: 'memory_epoch_fenced' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(target.calls).toHaveLength(1);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });
});

describe('§6.5 restart and stop', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('pending jobs survive stop and a new outbox instance completes them', async () => {
    const first = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await first.enqueue({ ...SCOPE, baseJobId: `b-${i}`, events: [sessionEvent()] })).job_id);
    await first.stop();
    expect((await h().jobs()).map((j) => j.phase)).toEqual(['pending', 'pending', 'pending']);
    const target = new RecordingTarget();
    await h().started(target, {}, {}, await h().db.dataSource());
    await eventually(async () => (await h().jobs()).every((j) => j.phase === 'completed'));
    expect(target.calls.map((c) => c.jobId).sort()).toEqual(ids.sort());
  });

  it('stop aborts deliveries in flight and writes nothing; the lease expires and another instance completes the job', async () => {
    const hung = new RecordingTarget(hang);
    const first = await h().started(hung, { leaseMs: 400 });
    const { job_id } = await first.enqueue({ ...SCOPE, baseJobId: 'b-hung', events: [sessionEvent()] });
    await eventually(() => hung.calls.length === 1);
    await first.stop();
    expect(hung.calls[0].call.signal.aborted).toBe(true);
    const row = await h().job(job_id);
    expect(row).toMatchObject({ phase: 'running', attempts: 1 });
    const target = new RecordingTarget();
    await h().started(target, {}, {}, await h().db.dataSource());
    await eventually(async () => (await h().job(job_id))?.phase === 'completed');
    expect((await h().job(job_id))?.attempts).toBe(2);
    expect(target.calls).toHaveLength(1);
  });

  it('a delivery is aborted at its lease end', async () => {
    const target = new RecordingTarget(hang);
    const outbox = await h().started(target, { leaseMs: 150, backoffBaseMs: 60_000, backoffMaxMs: 60_000 });
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'b-lease', events: [sessionEvent()] });
    await eventually(() => target.calls.length === 1);
    const { signal, timeoutMs } = target.calls[0].call;
    expect(timeoutMs).toBeLessThanOrEqual(150);
    await eventually(() => signal.aborted, 2000);
    // the attempt ran out of its lease: recorded as a retry if the fence still held, else left to expire
    await eventually(async () => {
      const row = await h().job(job_id);
      return row?.phase === 'retry_wait' || (row?.phase === 'running' && row.lease_until_ms <= Date.now());
    });
  });

  it('the bundle learns that the processor loop died', async () => {
    const target = new RecordingTarget(failWith('memory_shard_adapter_failed'));
    const outbox = await h().started(target, {}, {
      random: () => {
        throw new Error('broken random source');
      },
    });
    const told: RuntimeServiceError[] = [];
    outbox.onDied((error) => told.push(error));
    await outbox.enqueue({ ...SCOPE, baseJobId: 'b-die', events: [sessionEvent()] });
    const died = await outbox.processorDied;
    expect(died.code).toBe('runtime_service_child_down');
    expect(died.details).toEqual({ component: 'memory_outbox' });
    await eventually(() => told.length === 1);
    expect((await outbox.health()).status).toBe('unavailable');
  });
});

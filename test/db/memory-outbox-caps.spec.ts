import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import type { PostgresMemoryOutbox } from '../../src/services/outbox/memory-outbox';
import type { MemoryOutboxOptions } from '../../src/services/outbox/outbox-options';
import { useHarness } from '../support/database-harness';
import { openOutboxHarness, PARKED, RecordingTarget, sessionEvent, type OutboxHarness } from '../support/outbox-harness';
import { eventually } from '../support/eventually';

const scope = (n: number) => ({ appName: 'app-a', userId: `user-${n}` });
let seq = 0;
const job = (n: number, events = [sessionEvent()]) => ({ ...scope(n), baseJobId: `b-${(seq += 1)}`, events });

/** Everything the outbox stores, to show that a refusal wrote nothing (usage timestamps included). */
async function snapshot(h: OutboxHarness) {
  return {
    jobs: await h.db.sql('SELECT * FROM agent_runtime_memory_outbox_jobs ORDER BY job_id'),
    usage: await h.db.sql(`SELECT * FROM agent_runtime_memory_outbox_usage WHERE usage_key <> 'health' ORDER BY usage_key`),
  };
}

async function refusal(h: OutboxHarness, outbox: PostgresMemoryOutbox, request: Parameters<PostgresMemoryOutbox['enqueue']>[0]): Promise<[string, unknown]> {
  const before = await snapshot(h);
  const error = await outbox.enqueue(request).then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as RuntimeServiceError,
  );
  expect(RuntimeServiceError.isRuntimeServiceError(error)).toBe(true);
  expect(await snapshot(h)).toEqual(before);
  return [error.code, error.details];
}

/** A started outbox whose jobs nobody delivers. */
const parked = (h: OutboxHarness, options: MemoryOutboxOptions) => h.started(new RecordingTarget(), options, {}, undefined, PARKED);

describe('§6.3 caps refuse new jobs and write nothing', () => {
  const h = useHarness(openOutboxHarness, 'each');
  const bytesOfOneJob = async (outbox: PostgresMemoryOutbox) => {
    await outbox.enqueue(job(0));
    return (await h().jobs())[0].job_bytes;
  };

  it('maxEventsPerJob, maxEventBytes and maxJobBytes → memory_outbox_job_too_large', async () => {
    const outbox = await parked(h(), { maxEventsPerJob: 2, maxEventBytes: 400, maxJobBytes: 700 });
    expect(await refusal(h(), outbox, job(1, [sessionEvent(), sessionEvent(), sessionEvent()]))).toEqual(['memory_outbox_job_too_large', { limit: 'maxEventsPerJob' }]);
    expect(await refusal(h(), outbox, job(1, [sessionEvent('x'.repeat(400))]))).toEqual(['memory_outbox_job_too_large', { limit: 'maxEventBytes' }]);
    expect(await refusal(h(), outbox, job(1, [sessionEvent('x'.repeat(150)), sessionEvent('x'.repeat(150))]))).toEqual(['memory_outbox_job_too_large', { limit: 'maxJobBytes' }]);
    await outbox.enqueue(job(1, [sessionEvent(), sessionEvent()]));
    expect(await h().jobs()).toHaveLength(1);
  });

  it('maxActiveGlobal → memory_outbox_capacity_reached', async () => {
    const outbox = await parked(h(), { maxActiveGlobal: 2 });
    await outbox.enqueue(job(1));
    await outbox.enqueue(job(2));
    expect(await refusal(h(), outbox, job(3))).toEqual(['memory_outbox_capacity_reached', { limit: 'maxActiveGlobal' }]);
  });

  it('maxActivePerScope → memory_outbox_capacity_reached; other scopes go on', async () => {
    const outbox = await parked(h(), { maxActivePerScope: 1 });
    await outbox.enqueue(job(1));
    expect(await refusal(h(), outbox, job(1))).toEqual(['memory_outbox_capacity_reached', { limit: 'maxActivePerScope' }]);
    await outbox.enqueue(job(2));
  });

  it('maxActiveBytesGlobal and maxActiveBytesPerScope → memory_outbox_capacity_reached', async () => {
    const probe = await parked(h(), {});
    const bytes = await bytesOfOneJob(probe);
    await probe.stop();
    const global = await parked(h(), { maxActiveBytesGlobal: bytes * 2 + 1, maxActiveBytesPerScope: bytes * 3 });
    await global.enqueue(job(1));
    expect(await refusal(h(), global, job(2))).toEqual(['memory_outbox_capacity_reached', { limit: 'maxActiveBytesGlobal' }]);
    await global.stop();
    const perScope = await parked(h(), { maxActiveBytesPerScope: bytes + 1 });
    expect(await refusal(h(), perScope, job(0))).toEqual(['memory_outbox_capacity_reached', { limit: 'maxActiveBytesPerScope' }]);
    await perScope.enqueue(job(5));
  });

  it('the hard reservation: active + terminal < maxTerminalRecords, nothing to prune → capacity reached', async () => {
    const target = new RecordingTarget();
    const deliverer = await h().started(target, { maxTerminalRecords: 2 });
    await deliverer.enqueue(job(1));
    await eventually(async () => (await h().jobs())[0]?.phase === 'completed');
    await deliverer.enqueue({ ...job(1), adapterId: PARKED });
    expect(await refusal(h(), deliverer, job(2))).toEqual(['memory_outbox_capacity_reached', { limit: 'maxTerminalRecords' }]);
  });

  it('when only the reservation is full, one prune batch runs first', async () => {
    const enqueuer = await parked(h(), { maxTerminalRecords: 2, terminalRetentionMs: 0, pollIntervalMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const deliverer = await h().started(new RecordingTarget(), {});
    const first = await deliverer.enqueue(job(1));
    await eventually(async () => (await h().job(first.job_id))?.phase === 'completed');
    await deliverer.stop();
    await enqueuer.enqueue(job(2));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const third = await enqueuer.enqueue(job(3));
    expect(third.created).toBe(true);
    expect((await h().jobs()).map((j) => j.phase)).toEqual(['pending', 'pending']);
    expect(await h().job(first.job_id)).toBeUndefined();
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });
});

describe('§6.5 retention', () => {
  const h = useHarness(openOutboxHarness, 'each');

  async function terminalJobs(count: number): Promise<string[]> {
    const deliverer = await h().started(new RecordingTarget());
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push((await deliverer.enqueue({ ...scope(i % 2), baseJobId: `t-${i}`, events: [sessionEvent()] })).job_id);
    await eventually(async () => (await h().jobs()).every((j) => j.phase === 'completed'));
    await deliverer.stop();
    return ids;
  }

  it('pruning is batched: maxPruneBatch 2 deletes 2 per cycle, oldest (finished_at_ms, job_id) first', async () => {
    const ids = await terminalJobs(5);
    // finish order t-4, t-3, then t-0..t-2 at one time: ties by job id
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_jobs SET finished_at_ms = CASE job_id WHEN 't-4' THEN 1000 WHEN 't-3' THEN 1001 ELSE 1002 END`);
    const pruner = await h().outbox({ terminalRetentionMs: 0, maxPruneBatch: 2 });
    const remaining = async () => (await h().jobs()).map((j) => j.job_id).sort();
    expect(await pruner.pruneOnce()).toBe(2);
    expect(await remaining()).toEqual(['t-0', 't-1', 't-2']);
    expect(await h().usage()).toEqual(await h().expectedUsage());
    expect(await pruner.pruneOnce()).toBe(2);
    expect(await remaining()).toEqual(['t-2']);
    expect(await pruner.pruneOnce()).toBe(1);
    expect(await pruner.pruneOnce()).toBe(0);
    expect(ids).toHaveLength(5);
    // scope rows at zero are gone; the global row stays
    expect(await h().usage()).toEqual([{ usage_key: 'global', active_jobs: 0, active_bytes: 0, terminal_jobs: 0 }]);
  });

  it('only terminal jobs older than terminalRetentionMs are pruned', async () => {
    await terminalJobs(2);
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_jobs SET finished_at_ms = finished_at_ms - 120000 WHERE job_id = 't-0'`);
    const active = await parked(h(), {});
    await active.enqueue({ ...scope(7), baseJobId: 'active', events: [sessionEvent()] });
    const pruner = await h().outbox({ terminalRetentionMs: 60_000 });
    expect(await pruner.pruneOnce()).toBe(1);
    expect((await h().jobs()).map((j) => j.job_id).sort()).toEqual(['active', 't-1']);
  });

  it('the processor prunes a batch per cycle', async () => {
    const outbox = await h().started(new RecordingTarget(), { terminalRetentionMs: 0 });
    await outbox.enqueue(job(1));
    await eventually(async () => (await h().jobs()).length === 0);
    expect(await h().usage()).toEqual([{ usage_key: 'global', active_jobs: 0, active_bytes: 0, terminal_jobs: 0 }]);
  });
});

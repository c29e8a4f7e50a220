import { OutboxContext } from '../../src/services/outbox/outbox-context';
import { claimJobs, type ClaimCursor } from '../../src/services/outbox/outbox-claims';
import { resolveMemoryOutboxOptions, type MemoryOutboxOptions } from '../../src/services/outbox/outbox-options';
import { completeJob, failJob } from '../../src/services/outbox/outbox-settle';
import { systemClock } from '../../src/shared/time/clock';
import type { DataSource } from 'typeorm';
import { useHarness } from '../support/database-harness';
import { hang, openOutboxHarness, RecordingTarget, sessionEvent, type OutboxHarness } from '../support/outbox-harness';
import { eventually } from '../support/eventually';

const SCOPE = Object.freeze({ appName: 'app-a', userId: 'user-1' });
const DURABLE = 'durable-local-memory-v1';

/** The internals of one instance: the claim and completion steps without the loop, to stage races exactly. */
function contextOn(dataSource: DataSource, options: MemoryOutboxOptions = {}): OutboxContext {
  return new OutboxContext(dataSource, resolveMemoryOutboxOptions(options), systemClock, () => 0, undefined);
}

async function parkedJobs(h: OutboxHarness, count: number, adapterId?: string, prefix = 'job'): Promise<string[]> {
  const parked = await h.started(new RecordingTarget(), {}, {}, undefined, 'nobody');
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    ids.push((await parked.enqueue({ ...SCOPE, baseJobId: `${prefix}-${String(i).padStart(3, '0')}`, events: [sessionEvent(`e${i}`)], adapterId })).job_id);
  }
  await parked.stop();
  return ids;
}

describe('§6.4 several instances on the same tables', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('two outbox instances never deliver the same job concurrently, and every job completes once', async () => {
    const ids = await parkedJobs(h(), 40);
    const slow = async (call: { events: readonly unknown[] }) => {
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 10)));
      return { added: call.events.length, duplicates: 0 };
    };
    const active = new Set<string>();
    const overlaps = { value: 0 };
    const targetOne = new RecordingTarget(slow, active, overlaps);
    const targetTwo = new RecordingTarget(slow, active, overlaps);
    const options = { processor: { concurrency: 4 }, pollIntervalMs: 5 };
    const one = await h().started(targetOne, options, {}, await h().db.dataSource());
    const two = await h().started(targetTwo, options, {}, await h().db.dataSource());
    await eventually(async () => (await h().jobs()).every((job) => job.phase === 'completed'), 20_000);
    expect(overlaps.value).toBe(0);
    expect(targetOne.calls.length).toBeGreaterThan(0);
    expect(targetTwo.calls.length).toBeGreaterThan(0);
    for (const id of ids) expect(targetOne.deliveriesOf(id) + targetTwo.deliveriesOf(id)).toBe(1);
    expect(h().telemetry.filter((t) => t.to === 'completed')).toHaveLength(40);
    expect((await h().jobs()).every((job) => job.attempts === 1)).toBe(true);
    expect(await h().usage()).toEqual(await h().expectedUsage());
    await Promise.all([one.stop(), two.stop()]);
  });

  it('an expired lease is reclaimed by another instance', async () => {
    const [jobId] = await parkedJobs(h(), 1);
    const hung = new RecordingTarget(hang);
    const first = await h().started(hung, { leaseMs: 300 }, {}, await h().db.dataSource());
    await eventually(() => hung.calls.length === 1);
    await first.stop();
    const leased = await h().job(jobId);
    expect(leased).toMatchObject({ phase: 'running', attempts: 1 });
    const target = new RecordingTarget();
    await h().started(target, {}, {}, await h().db.dataSource());
    const done = await eventually(async () => {
      const row = await h().job(jobId);
      return row?.phase === 'completed' && row;
    });
    expect(done.attempts).toBe(2);
    expect(h().telemetry).toContainEqual({ from: 'running', to: 'running', attempts: 2, reason: null });
    expect(target.calls).toHaveLength(1);
  });

  it('a stale lease token cannot complete: claim, let the lease expire, reclaim elsewhere, and the first completion commits nothing', async () => {
    const [jobId] = await parkedJobs(h(), 1);
    const a = contextOn(await h().db.dataSource(), { leaseMs: 200 });
    const b = contextOn(await h().db.dataSource(), { leaseMs: 30_000 });
    const [mine] = (await claimJobs(a, [DURABLE], 1, null)).claimed;
    expect(mine).toMatchObject({ jobId, attempts: 1, from: 'pending' });
    expect((await claimJobs(b, [DURABLE], 1, null)).claimed).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [theirs] = (await claimJobs(b, [DURABLE], 1, null)).claimed;
    expect(theirs).toMatchObject({ jobId, attempts: 2, from: 'running' });
    expect(theirs.leaseToken).not.toBe(mine.leaseToken);
    const usage = await h().usage();
    expect(await completeJob(a, mine)).toBe(false);
    expect(await failJob(a, mine, 'memory_shard_adapter_failed')).toBeNull();
    expect(await h().job(jobId)).toMatchObject({ phase: 'running', lease_token: theirs.leaseToken, attempts: 2, last_error: null });
    expect(await h().usage()).toEqual(usage);
    expect(await completeJob(b, theirs)).toBe(true);
    expect(await h().job(jobId)).toMatchObject({ phase: 'completed', lease_token: null });
    expect(await completeJob(b, theirs)).toBe(false);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });

  it('a lease that ended is not completed even when nobody reclaimed the job', async () => {
    const [jobId] = await parkedJobs(h(), 1);
    const a = contextOn(await h().db.dataSource(), { leaseMs: 50 });
    const [mine] = (await claimJobs(a, [DURABLE], 1, null)).claimed;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await completeJob(a, mine)).toBe(false);
    expect(await h().job(jobId)).toMatchObject({ phase: 'running', lease_token: mine.leaseToken });
  });

  it('a running job whose lease ended on its last attempt is failed, not claimed again', async () => {
    const parked = await h().started(new RecordingTarget(), {}, {}, undefined, 'nobody');
    const { job_id } = await parked.enqueue({ ...SCOPE, baseJobId: 'last', events: [sessionEvent()], maxAttempts: 1 });
    const a = contextOn(await h().db.dataSource(), { leaseMs: 50 });
    await claimJobs(a, [DURABLE], 1, null);
    await new Promise((resolve) => setTimeout(resolve, 120));
    const target = new RecordingTarget();
    await h().started(target);
    const row = await eventually(async () => {
      const r = await h().job(job_id);
      return r?.phase === 'failed' && r;
    });
    expect(row).toMatchObject({ attempts: 1, last_error: 'memory_outbox_lease_expired', lease_token: null });
    expect(target.calls).toHaveLength(0);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });
});

describe('§6.4 bounded claim scan', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('examines at most maxClaimScan entries; the cursor continues where the scan stopped and wraps', async () => {
    await parkedJobs(h(), 5, 'foreign-adapter');
    const [target] = await parkedJobs(h(), 1, undefined, 'z');
    // the registered job is last in the claim order
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_jobs SET due_at_ms = 1000 + CASE WHEN job_id = $1 THEN 10 ELSE 0 END`, [target]);
    const context = contextOn(await h().db.dataSource(), { maxClaimScan: 2 });
    const cursors: Array<ClaimCursor | null> = [];
    let cursor: ClaimCursor | null = null;
    let claimed: string[] = [];
    for (let cycle = 0; cycle < 3 && claimed.length === 0; cycle += 1) {
      const result = await claimJobs(context, [DURABLE], 4, cursor);
      cursor = result.cursor;
      cursors.push(cursor);
      claimed = result.claimed.map((job) => job.jobId);
    }
    expect(claimed).toEqual([target]);
    // windows [0,1], [2,3], [4,z]: each full, so the cursor moves to its end; z is claimed in the third
    expect(cursors.map((c) => c?.jobId ?? null)).toEqual(['job-001', 'job-003', target]);
    // after the last entry the scan finds the end and wraps to the start
    expect(await claimJobs(context, [DURABLE], 4, cursor)).toMatchObject({ claimed: [], cursor: null });
    expect(await claimJobs(context, [DURABLE], 4, null)).toMatchObject({ claimed: [], cursor: { jobId: 'job-001' } });
  });

  it('a started outbox with maxClaimScan 2 delivers a job behind entries it cannot claim', async () => {
    await parkedJobs(h(), 6, 'foreign-adapter');
    const parked = await h().started(new RecordingTarget(), {}, {}, undefined, 'nobody');
    const { job_id } = await parked.enqueue({ ...SCOPE, baseJobId: 'behind', events: [sessionEvent()] });
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_jobs SET due_at_ms = due_at_ms + 1 WHERE job_id = $1`, [job_id]);
    const recorder = new RecordingTarget();
    await h().started(recorder, { maxClaimScan: 2 });
    await eventually(async () => (await h().job(job_id))?.phase === 'completed');
    expect(recorder.calls.map((c) => c.jobId)).toEqual([job_id]);
    expect((await h().jobs()).filter((j) => j.adapter_id === 'foreign-adapter').every((j) => j.phase === 'pending')).toBe(true);
  });

  it('when free slots fill, the cursor is the last job claimed', async () => {
    const ids = await parkedJobs(h(), 3);
    const context = contextOn(await h().db.dataSource());
    const first = await claimJobs(context, [DURABLE], 2, null);
    expect(first.claimed.map((j) => j.jobId)).toEqual(ids.slice(0, 2));
    expect(first.cursor?.jobId).toBe(ids[1]);
    const second = await claimJobs(context, [DURABLE], 2, first.cursor);
    expect(second.claimed.map((j) => j.jobId)).toEqual([ids[2]]);
    expect(second.cursor).toBeNull();
  });
});


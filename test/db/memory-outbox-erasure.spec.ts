import { poolOf } from '../../src/database/postgres-pool';
import { runTransaction } from '../../src/database/transaction-runner';
import { PostgresMemoryAdapter } from '../../src/services/memory/postgres-memory-adapter';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import type { PostgresMemoryOutbox } from '../../src/services/outbox/memory-outbox';
import { epochBoundJobId } from '../../src/services/outbox/outbox-enqueue';
import { sha256Hex } from '../../src/shared/text/sha256';
import { seededRandom } from '../../src/shared/testing/seeded-random';
import type { IngestionCount, MemoryScope } from '../../src/services/services.types';
import { useHarness } from '../support/database-harness';
import { openOutboxHarness, PARKED, RecordingTarget, sessionEvent, type OutboxHarness } from '../support/outbox-harness';
import { eventually } from '../support/eventually';

const SCOPE = Object.freeze({ appName: 'app-a', userId: 'user-1' });
const OTHER = Object.freeze({ appName: 'app-a', userId: 'user-2' });

/** What `eraseMemory` does in its transaction, as far as the outbox is concerned: raise the epoch, then cancel. */
async function erase(h: OutboxHarness, outbox: PostgresMemoryOutbox, scope: MemoryScope, rollback = false): Promise<{ epoch: number; cancelled: number }> {
  const pool = poolOf(await h.dataSource());
  if (pool === null) throw new Error('no pool');
  const attempt = runTransaction(
    pool,
    async (client) => {
      const { rows } = await client.query(
        `INSERT INTO agent_runtime_memory_erasure_epochs AS e (app_name, user_id, epoch, updated_at_ms) VALUES ($1, $2, 1, 0)
         ON CONFLICT (app_name, user_id) DO UPDATE SET epoch = e.epoch + 1 RETURNING epoch`,
        [scope.appName, scope.userId],
      );
      const epoch = Number(rows[0].epoch);
      const cancelled = await outbox.cancelOlderEpochJobs(client, scope, epoch);
      if (rollback) throw new RuntimeServiceError('timeout');
      return { epoch, cancelled };
    },
    () => new Error('database failure'),
  );
  return attempt;
}

/** Jobs and usage read in one snapshot, so a check never sees half of another transaction. */
async function consistentUsage(h: OutboxHarness) {
  await h.db.sql('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    return { actual: await h.usage(), expected: await h.expectedUsage() };
  } finally {
    await h.db.sql('COMMIT');
  }
}

describe('§6.5 erasure fences older epochs', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it('cancels the scope\'s active jobs of older epochs; a retried enqueue gets a new epoch-bound id', async () => {
    const outbox = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    const events = [sessionEvent('remember me')];
    const mine = await outbox.enqueue({ ...SCOPE, baseJobId: 'base-1', events });
    await outbox.enqueue({ ...OTHER, baseJobId: 'base-2', events });
    expect(await erase(h(), outbox, SCOPE)).toEqual({ epoch: 1, cancelled: 1 });
    expect(await h().job(mine.job_id)).toMatchObject({ phase: 'cancelled', last_error: 'memory_epoch_fenced', lease_token: null });
    expect((await h().job('base-2'))?.phase).toBe('pending');
    expect(await h().usage()).toEqual(await h().expectedUsage());
    const retried = await outbox.enqueue({ ...SCOPE, baseJobId: 'base-1', events });
    expect(retried).toEqual({ job_id: epochBoundJobId('base-1', 1), phase: 'pending', created: true });
    expect(retried.job_id).toMatch(/^memout-[0-9a-f]{40}$/);
    expect(await h().job(retried.job_id)).toMatchObject({ epoch: 1, phase: 'pending' });
    expect(await outbox.enqueue({ ...SCOPE, baseJobId: 'base-1', events })).toEqual({ ...retried, created: false });
    // a second erasure cancels the epoch-1 job, not again the cancelled one
    expect(await erase(h(), outbox, SCOPE)).toEqual({ epoch: 2, cancelled: 1 });
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });

  it('an erasure that rolls back cancels nothing', async () => {
    const outbox = await h().started(new RecordingTarget(), {}, {}, undefined, PARKED);
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'base-1', events: [sessionEvent()] });
    await expect(erase(h(), outbox, SCOPE, true)).rejects.toMatchObject({ code: 'timeout' });
    expect((await h().job(job_id))?.phase).toBe('pending');
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });

  it('a delivery in flight during the erasure cannot complete its cancelled job', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const target = new RecordingTarget(async (call) => {
      await gate;
      return { added: call.events.length, duplicates: 0 };
    });
    const outbox = await h().started(target);
    const { job_id } = await outbox.enqueue({ ...SCOPE, baseJobId: 'base-1', events: [sessionEvent()] });
    await eventually(() => target.calls.length === 1);
    expect(await erase(h(), outbox, SCOPE)).toEqual({ epoch: 1, cancelled: 1 });
    release();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await h().job(job_id)).toMatchObject({ phase: 'cancelled', attempts: 1 });
    expect(h().telemetry.some((t) => t.to === 'completed')).toBe(false);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });

  it('with the Postgres memory adapter: erasure fences a late older-epoch delivery and the new epoch ingests again', async () => {
    const dataSource = await h().dataSource();
    let outbox!: PostgresMemoryOutbox;
    const adapter = new PostgresMemoryAdapter(dataSource, {}, { onErase: (client, scope, epoch) => outbox.cancelOlderEpochJobs(client, scope, epoch).then(() => undefined) });
    h().db.track(() => adapter.close());
    outbox = await h().started(adapter, { backoffBaseMs: 1, backoffMaxMs: 1 });
    const events = [sessionEvent('first memory'), sessionEvent('second memory', { kind: 'final_output', author: 'agent' })];
    const first = await outbox.enqueue({ ...SCOPE, baseJobId: 'session-1:a:b', events });
    await eventually(async () => (await h().job(first.job_id))?.phase === 'completed');
    const entries = async () => Number((await h().db.sql<{ n: string }>('SELECT count(*) AS n FROM agent_runtime_memory_entries'))[0].n);
    expect(await entries()).toBe(2);
    expect(await adapter.eraseMemory(SCOPE, { signal: new AbortController().signal, timeoutMs: 5000 })).toEqual({ epoch: 1 });
    expect(await entries()).toBe(0);
    // a job written at epoch 0 after the erasure (a delayed enqueue) is fenced at delivery and cancelled
    await h().db.sql(
      `INSERT INTO agent_runtime_memory_outbox_jobs (job_id, adapter_id, app_name, user_id, epoch, phase, events, event_count, job_bytes, attempts, max_attempts,
         due_at_ms, created_at_ms, updated_at_ms) SELECT 'late', adapter_id, app_name, user_id, 0, 'pending', events, event_count, job_bytes, 0, 5, 0, 0, 0
       FROM agent_runtime_memory_outbox_jobs WHERE job_id = $1`,
      [first.job_id],
    );
    await h().db.sql(`UPDATE agent_runtime_memory_outbox_usage SET active_jobs = active_jobs + 1, active_bytes = active_bytes + (SELECT job_bytes FROM agent_runtime_memory_outbox_jobs WHERE job_id = 'late')`);
    await eventually(async () => (await h().job('late'))?.phase === 'cancelled');
    expect((await h().job('late'))?.last_error).toBe('memory_epoch_fenced');
    expect(await entries()).toBe(0);
    const again = await outbox.enqueue({ ...SCOPE, baseJobId: 'session-1:a:b', events });
    expect(again.job_id).toBe(epochBoundJobId('session-1:a:b', 1));
    await eventually(async () => (await h().job(again.job_id))?.phase === 'completed');
    expect(await entries()).toBe(2);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });
});

describe('§9 usage rows equal the jobs they describe', () => {
  const h = useHarness(openOutboxHarness, 'each');

  it.each([11, 29])('after a mixed workload of enqueues, deliveries, failures, fences, erasures and prunes (seed %i)', async (seed) => {
    const random = seededRandom(seed);
    const scopes: MemoryScope[] = [SCOPE, OTHER, { appName: 'app-b', userId: 'user-1' }];
    // each job's fate follows from its id (always failing, failing once, fenced, or fine), whatever the timing
    const target = new RecordingTarget(async (call): Promise<IngestionCount> => {
      const fate = parseInt(sha256Hex(call.jobId ?? '').slice(0, 8), 16) % 5;
      const earlier = target.deliveriesOf(call.jobId ?? '') - 1;
      if (fate === 0 || (fate === 1 && earlier === 0)) throw new RuntimeServiceError('memory_shard_adapter_failed');
      if (fate === 2) throw new RuntimeServiceError('memory_epoch_fenced');
      return { added: call.events.length, duplicates: 0 };
    });
    const options = { backoffBaseMs: 1, backoffMaxMs: 5, maxAttempts: 3, defaultMaxAttempts: 2, terminalRetentionMs: 50, maxPruneBatch: 3, pollIntervalMs: 10 };
    const jitter = seededRandom(seed + 1);
    const outbox = await h().started(target, options, { random: jitter });
    const second = await h().started(target, options, { random: jitter }, await h().db.dataSource());
    for (let step = 0; step < 60; step += 1) {
      const scope = scopes[Math.floor(random() * scopes.length)];
      const draw = random();
      const via = draw < 0.5 ? outbox : second;
      if (draw < 0.8) {
        const count = 1 + Math.floor(random() * 3);
        await via.enqueue({ ...scope, baseJobId: `${scope.appName}/${scope.userId}:b-${Math.floor(random() * 10)}`, events: Array.from({ length: count }, () => sessionEvent('x'.repeat(Math.floor(random() * 50)))) });
      } else if (draw < 0.9) {
        await erase(h(), via, scope);
      } else {
        await via.pruneOnce();
      }
      if (step % 10 === 0) {
        const { actual, expected } = await consistentUsage(h());
        expect(actual).toEqual(expected);
      }
    }
    await eventually(async () => (await h().jobs()).every((job) => job.finished_at_ms !== null), 20_000, 'every job terminal');
    const { actual, expected } = await consistentUsage(h());
    expect(actual).toEqual(expected);
    const [global] = actual;
    expect(global.active_jobs + global.terminal_jobs).toBeLessThanOrEqual(outbox.options.maxTerminalRecords);
    expect(target.overlaps).toBe(0);
    // the walk went through every kind of transition
    expect(new Set(h().telemetry.map((t) => t.to))).toEqual(new Set(['pending', 'running', 'completed', 'retry_wait', 'failed', 'cancelled']));
  });
});

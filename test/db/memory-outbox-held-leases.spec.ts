import type { IngestionCount } from '../../src/services/services.types';
import { claimJobs } from '../../src/services/outbox/outbox-claims';
import { OutboxContext } from '../../src/services/outbox/outbox-context';
import { HeldLeases } from '../../src/services/outbox/outbox-leases';
import { resolveMemoryOutboxOptions } from '../../src/services/outbox/outbox-options';
import { systemClock } from '../../src/shared/time/clock';
import { useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { openOutboxHarness, RecordingTarget, sessionEvent, type OutboxHarness } from '../support/outbox-harness';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const SCOPE = { appName: 'held-app', userId: 'alice' };
/** Far longer than any bound below: lease expiry and a reclaim can never be what ends a row here. */
const LONG_LEASE = { leaseMs: 120_000 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('nothing is dropped in the outbox (issue 23 item 1)', () => {
  const h = useHarness(openOutboxHarness, 'each');
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await startTcpProxy(h().db.database.url);
  });
  afterEach(async () => {
    await proxy.sever();
  });

  const proxied = async (harness: OutboxHarness) => harness.db.dataSource({}, proxy.url);

  it('a completion that fails on the database is retried within the lease and lands once the database answers', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const target = new RecordingTarget(async (call): Promise<IngestionCount> => {
      await gate;
      return { added: call.events.length, duplicates: 0 };
    });
    const outbox = await h().started(target, LONG_LEASE, {}, await proxied(h()));
    const { job_id: jobId } = await outbox.enqueue({ ...SCOPE, baseJobId: 'retried-completion', events: [sessionEvent('x')] });
    await eventually(() => target.calls.length === 1, 10_000, 'delivery started');
    proxy.cut();
    release();
    await sleep(3000);
    expect(await h().job(jobId)).toMatchObject({ phase: 'running' });
    proxy.restore();
    const restoredAt = Date.now();
    await eventually(async () => (await h().job(jobId))?.phase === 'completed', 10_000, 'completed');
    // the retries pause at most 2 s
    expect(Date.now() - restoredAt).toBeLessThan(5000);
    expect(await h().job(jobId)).toMatchObject({ attempts: 1, lease_token: null, last_error: null });
    expect(target.deliveriesOf(jobId)).toBe(1);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  }, 30_000);

  it('a delivery in flight when its outbox stops in an outage: the next outbox sharing the held leases ends the row right after the database returns, not at the lease end', async () => {
    const heldLeases = new HeldLeases();
    const hung = new RecordingTarget(({ call }) => new Promise<IngestionCount>((_resolve, reject) => call.signal?.addEventListener('abort', () => reject(call.signal?.reason), { once: true })));
    const first = await h().started(hung, LONG_LEASE, { heldLeases }, await proxied(h()));
    const { job_id: jobId } = await first.enqueue({ ...SCOPE, baseJobId: 'abandoned', events: [sessionEvent('y')] });
    await eventually(() => hung.calls.length === 1, 10_000, 'delivery started');
    proxy.cut();
    // the generation stops on the outage: its delivery is aborted and its lease held, the row cannot be written yet
    await first.stop();
    expect(heldLeases.leases).toBe(1);
    await sleep(5000);
    expect(await h().job(jobId)).toMatchObject({ phase: 'running', attempts: 1 });

    proxy.restore();
    const restoredAt = Date.now();
    const target = new RecordingTarget();
    await h().started(target, LONG_LEASE, { heldLeases }, await proxied(h()));
    await eventually(async () => (await h().job(jobId))?.phase === 'completed', 15_000, 'completed by the next outbox');
    expect(Date.now() - restoredAt).toBeLessThan(15_000);
    expect(heldLeases.size).toBe(0);
    expect(await h().job(jobId)).toMatchObject({ attempts: 2, lease_token: null });
    expect(h().telemetry.filter((t) => t.reason === 'memory_outbox_owner_gone')).toEqual([expect.objectContaining({ from: 'running', to: 'retry_wait', attempts: 1 })]);
    expect(await h().usage()).toEqual(await h().expectedUsage());
  }, 40_000);

  it('a held lease another instance took since is forgotten without a write', async () => {
    const heldLeases = new HeldLeases();
    const hung = new RecordingTarget(({ call }) => new Promise<IngestionCount>((_resolve, reject) => call.signal?.addEventListener('abort', () => reject(call.signal?.reason), { once: true })));
    const first = await h().started(hung, { leaseMs: 300 }, { heldLeases }, await proxied(h()));
    const { job_id: jobId } = await first.enqueue({ ...SCOPE, baseJobId: 'taken', events: [sessionEvent('z')] });
    await eventually(() => hung.calls.length === 1, 10_000, 'delivery started');
    proxy.cut();
    await first.stop();
    expect(heldLeases.leases).toBe(1);
    // another instance (not through the proxy) reclaims the expired lease and completes the job
    const other = new RecordingTarget();
    await h().started(other, {}, {}, await h().db.dataSource());
    await eventually(async () => (await h().job(jobId))?.phase === 'completed', 10_000, 'completed elsewhere');
    proxy.restore();
    await h().started(new RecordingTarget(), {}, { heldLeases }, await proxied(h()));
    await eventually(() => heldLeases.size === 0, 10_000, 'held lease forgotten');
    expect(await h().job(jobId)).toMatchObject({ phase: 'completed', attempts: 2, last_error: null });
    expect(h().telemetry.some((t) => t.reason === 'memory_outbox_owner_gone')).toBe(false);
  }, 30_000);

  it('a claim whose answer was lost: its leases derive from the claim id, and the held claim puts them back to retry_wait without counting the attempt', async () => {
    const parked = await h().started(new RecordingTarget(), {}, {}, undefined, 'nobody');
    const { job_id: jobId } = await parked.enqueue({ ...SCOPE, baseJobId: 'lost-claim', events: [sessionEvent('w')], adapterId: 'durable-local-memory-v1' });
    const other = await parked.enqueue({ ...SCOPE, baseJobId: 'claimed-by-another', events: [sessionEvent('v')], adapterId: 'durable-local-memory-v1' });
    await parked.stop();
    const context = new OutboxContext(await h().dataSource(), resolveMemoryOutboxOptions(LONG_LEASE), systemClock, () => 0, undefined);
    // the claim commits, but as far as the processor knows it failed (its answer never arrived)
    const lost = await claimJobs(context, ['durable-local-memory-v1'], 1, null, 'claim-lost');
    const kept = await claimJobs(context, ['durable-local-memory-v1'], 1, null, 'claim-answered');
    expect([lost.claimed[0].jobId, kept.claimed[0].jobId]).toEqual([jobId, other.job_id]);
    const heldLeases = new HeldLeases();
    heldLeases.holdLostClaim('claim-lost');
    expect(await heldLeases.reconcile(context)).toBe(1);
    expect(heldLeases.size).toBe(0);
    expect(await h().job(jobId)).toMatchObject({ phase: 'retry_wait', attempts: 0, lease_token: null, lease_until_ms: 0 });
    expect(await h().job(other.job_id)).toMatchObject({ phase: 'running', attempts: 1, lease_token: kept.claimed[0].leaseToken });
    expect(await h().usage()).toEqual(await h().expectedUsage());
  });
});

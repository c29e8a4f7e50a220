import type { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import { rejected } from '../../src/shared/testing/rejected';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { startTcpProxy } from '../support/tcp-proxy';
import { clusterNode, rowCounts, terminateLockSession, terminateSessions } from './admission-fixture';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ClusterAdmissionController across instances (spec 08 §3)', () => {
  const h = useHarness(() => openDatabaseHarness());

  it('global 4 / agent 2 with 50 concurrent acquires over 2 instances: never above the limits, all granted', async () => {
    const config = { globalLimit: 4, defaultAgentLimit: 2, overflow: 'queue' as const, maxQueue: 100, defaultQueueTimeoutMs: 'infinity' as const };
    const a = await clusterNode(h(), 'adm-a', config);
    const b = await clusterNode(h(), 'adm-b', config);
    const agents = ['alpha', 'beta', 'gamma'];
    let holding = 0;
    let maxHolding = 0;
    const perAgent = new Map<string, number>();
    let maxPerAgent = 0;
    let sampling = true;
    let maxSampled = 0;
    let maxSampledAgent = 0;
    const sampler = (async () => {
      while (sampling) {
        const [row] = await h().sql<{ total: number; top: number }>(
          `SELECT count(*)::int AS total, coalesce(max(n), 0)::int AS top FROM agent_runtime_admission_permits,
             LATERAL (SELECT count(*) AS n FROM agent_runtime_admission_permits p WHERE p.agent_id = agent_runtime_admission_permits.agent_id) per`,
        );
        maxSampled = Math.max(maxSampled, row.total);
        maxSampledAgent = Math.max(maxSampledAgent, row.top);
        await sleep(2);
      }
    })();
    const work = Array.from({ length: 50 }, (_, i) =>
      (i % 2 === 0 ? a : b).controller.run(agents[i % 3], async (permit) => {
        holding += 1;
        const mine = (perAgent.get(permit.agentId) ?? 0) + 1;
        perAgent.set(permit.agentId, mine);
        maxHolding = Math.max(maxHolding, holding);
        maxPerAgent = Math.max(maxPerAgent, mine);
        await sleep(5 + (i % 4) * 3);
        perAgent.set(permit.agentId, (perAgent.get(permit.agentId) ?? 1) - 1);
        holding -= 1;
        return i;
      }),
    );
    const results = await Promise.all(work);
    sampling = false;
    await sampler;
    expect(results).toHaveLength(50);
    expect(maxHolding).toBeLessThanOrEqual(4);
    expect(maxHolding).toBeGreaterThan(1);
    expect(maxPerAgent).toBeLessThanOrEqual(2);
    expect(maxSampled).toBeLessThanOrEqual(4);
    expect(maxSampledAgent).toBeLessThanOrEqual(2);
    const grantedOn = (node: typeof a) => node.outcomes().filter((outcome) => outcome === 'granted').length;
    expect(grantedOn(a) + grantedOn(b)).toBe(50);
    await eventually(async () => {
      const counts = await rowCounts(h());
      return counts.permits === 0 && counts.queue === 0;
    });
  }, 60_000);

  it('per-agent FIFO holds across instances: grants follow enqueue order, wherever the request waits', async () => {
    const config = { globalLimit: 10, defaultAgentLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const a = await clusterNode(h(), 'adm-a', config);
    const b = await clusterNode(h(), 'adm-b', config);
    let held: { node: typeof a; permit: Permit } = { node: a, permit: await a.controller.acquire('shared') };
    const queued: Array<{ node: typeof a; ref: string }> = [];
    for (let i = 0; i < 6; i++) {
      const node = i % 2 === 0 ? a : b;
      const result = await node.controller.submit('shared');
      expect(result.status).toBe('queued');
      queued.push({ node, ref: result.requestRef });
    }
    for (const next of queued) {
      held.node.controller.release(held.permit);
      const permit = await next.node.controller.await(next.ref, 5000);
      // no other request of the agent was granted meanwhile
      expect((await rowCounts(h())).permits).toBe(1);
      held = { node: next.node, permit };
    }
    held.node.controller.release(held.permit);
    await eventually(async () => (await rowCounts(h())).permits === 0);
  });

  it('a release on A grants the waiter on B by NOTIFY (the poll is far away)', async () => {
    const config = { globalLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const a = await clusterNode(h(), 'adm-a', config, { reapIntervalMs: 60_000 });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 60_000 });
    const permit = await a.controller.acquire('x');
    const waiting = b.controller.acquire('x');
    await eventually(async () => (await rowCounts(h())).queue === 1);
    const releasedAt = Date.now();
    a.controller.release(permit);
    const granted = await waiting;
    expect(Date.now() - releasedAt).toBeLessThan(5000);
    expect(granted.agentId).toBe('x');
    expect(b.events.at(-1)).toMatchObject({ outcome: 'granted', agent_id: 'x' });
    expect(b.controller.status()).toMatchObject({ instances_live: 2, instance: { active: 1, queued: 0 } });
  });

  it("with B's LISTEN connection terminated the grant still arrives, and B listens again", async () => {
    const config = { globalLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const a = await clusterNode(h(), 'adm-a', config, { reapIntervalMs: 60_000 });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 300 });
    const permit = await a.controller.acquire('x');
    const waiting = b.controller.acquire('x');
    await eventually(async () => (await rowCounts(h())).queue === 1);
    expect(await terminateSessions(h(), 'adm-b', 'LISTEN%')).toBe(1);
    a.controller.release(permit);
    expect((await waiting).agentId).toBe('x');
    await eventually(() => b.controller.connected, 10_000, 'the listener to come back');
  });

  it('a grant whose notification was never heard is found by the periodic poll', async () => {
    const config = { globalLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const a = await clusterNode(h(), 'adm-a', config, { reapIntervalMs: 60_000 });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 300 });
    const permit = await a.controller.acquire('x');
    const queued = await b.controller.submit('x');
    // what a granting decision writes, without its NOTIFY
    await h().sql(`BEGIN; DELETE FROM agent_runtime_admission_permits;
      INSERT INTO agent_runtime_admission_permits (permit_id, request_id, agent_id, instance_id)
        SELECT permit_id, request_id, agent_id, instance_id FROM agent_runtime_admission_queue;
      DELETE FROM agent_runtime_admission_queue; COMMIT`);
    const startedAt = Date.now();
    const granted = await b.controller.await(queued.requestRef, 5000);
    expect(Date.now() - startedAt).toBeLessThan(3000);
    expect(granted.requestRef).toBe(queued.requestRef);
    // A's permit row went behind its back: A's poll is far away, and its release still lands harmlessly
    expect(a.controller.release(permit)).toBe(true);
  });

  it('a grant racing a cancel on the other instance is given back exactly once', async () => {
    const config = { globalLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const a = await clusterNode(h(), 'adm-a', config);
    const b = await clusterNode(h(), 'adm-b', config);
    for (let round = 0; round < 10; round++) {
      const permit = await a.controller.acquire('x');
      const queued = await b.controller.submit('x');
      a.controller.release(permit);
      if (round % 2 === 1) await sleep(round);
      b.controller.cancel(queued.requestRef);
      await eventually(async () => {
        const counts = await rowCounts(h());
        return counts.permits === 0 && counts.queue === 0 && b.controller.status().instance.active === 0;
      }, 10_000, `round ${round} to settle`);
    }
    expect((await a.controller.acquire('x')).agentId).toBe('x');
  });

  it('an instance whose lock session dies revokes its permits by its own clock, and only then is reaped: its capacity returns to the waiters on B, never beside its permits', async () => {
    const config = { globalLimit: 2, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const dead = { initialMs: 60_000, maxMs: 60_000 };
    // a grace that a stalled event loop on a loaded 2-core machine does not outlast before the kill (a
    // lapse then would revoke A's permits early); the margin covers A's timer firing late (default 1000 ms)
    const grace = { lockGraceMs: 1000, lockGraceMarginMs: 1500 };
    const a = await clusterNode(h(), 'adm-a', config, { reapIntervalMs: 50, instanceBackoff: dead, ...grace });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 50, ...grace });
    const heldOnA = [await a.controller.acquire('x'), await a.controller.acquire('y')];
    const revokedAt: number[] = [];
    for (const permit of heldOnA) permit.signal.addEventListener('abort', () => revokedAt.push(performance.now()));
    const queuedOnA = a.controller.acquire('x');
    expect(heldOnA.map((permit) => permit.signal.aborted)).toEqual([false, false]);
    await eventually(async () => (await rowCounts(h())).queue === 1);
    const grantedAt: number[] = [];
    const waitersOnB = [b.controller.acquire('x'), b.controller.acquire('y')].map((waiter) => waiter.then((permit) => (grantedAt.push(performance.now()), permit)));
    await eventually(async () => (await rowCounts(h())).queue === 3);
    // nothing lapsed before the kill: what follows is the kill's doing
    expect(revokedAt).toEqual([]);
    expect(await terminateLockSession(h(), 'adm-a')).toBe(1);
    const killedAt = performance.now();
    // A knows at once that its lock is gone: its queued request fails and it admits nothing more
    expect(await rejected<AdmissionError>(queuedOnA)).toMatchObject({ code: 'admission_store_unavailable' });
    expect(await rejected<AdmissionError>(a.controller.acquire('x'))).toMatchObject({ code: 'admission_store_unavailable' });
    const grants = await Promise.all(waitersOnB);
    expect(performance.now() - killedAt).toBeLessThan(8000);
    expect(new Set(grants.map((permit) => permit.id)).size).toBe(2);
    // A revoked its permits (owner_down) within its grace, before B was granted anything
    expect(revokedAt).toHaveLength(2);
    expect(heldOnA[0].signal.reason).toMatchObject({ details: { outcome: 'owner_down' } });
    // by its own timer (generous slack for a loaded machine); what makes it safe is the order below
    expect(Math.max(...revokedAt) - killedAt).toBeLessThan(grace.lockGraceMs + 1000);
    expect(Math.min(...grantedAt)).toBeGreaterThan(Math.max(...revokedAt));
    const rows = await h().sql<{ permit_id: string; instance_id: string }>('SELECT permit_id, instance_id FROM agent_runtime_admission_permits');
    expect(rows.map((row) => row.instance_id)).toEqual(['adm-b', 'adm-b']);
    expect(b.controller.status()).toMatchObject({ instances_live: 1, active: 2 });
  });

  it('an instance cut off from the database revokes its permits by its clock; its peers reap it only after its grace plus margin from when they first saw it dead', async () => {
    const config = { globalLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const proxy = await startTcpProxy(h().database.url);
    h().track(() => proxy.sever());
    const a = await clusterNode(h(), 'adm-a', config, { url: proxy.url, reapIntervalMs: 50, lockGraceMs: 400, lockGraceMarginMs: 1500, instanceBackoff: { initialMs: 50, maxMs: 100 } });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 20 });
    const held = await a.controller.acquire('x');
    let revokedAt = Infinity;
    held.signal.addEventListener('abort', () => (revokedAt = performance.now()));
    const waiter = b.controller.acquire('x');
    await eventually(async () => (await rowCounts(h())).queue === 1);
    // nothing lapsed before the cut
    expect(held.signal.aborted).toBe(false);
    expect(a.instance.live).toBe(true);
    proxy.cut();
    const cutAt = performance.now();
    await waiter;
    const grantedAt = performance.now();
    // A cannot delete its row: only B's reap frees the capacity, 1900 ms (grace + margin) after it first saw A dead
    expect(grantedAt - cutAt).toBeGreaterThanOrEqual(1900);
    expect(grantedAt - cutAt).toBeLessThan(6000);
    // by A's own timer (generous slack for a loaded machine), always before the grant; a lapse timer that
    // fired early by the clock and gave up (Node's timers count from the loop's cached time) failed here
    expect(revokedAt - cutAt).toBeLessThan(400 + 1000);
    expect(revokedAt).toBeLessThan(grantedAt);
    expect(held.signal.reason).toMatchObject({ details: { outcome: 'owner_down' } });
    const [{ reap_after_ms }] = await h().sql<{ reap_after_ms: number }>(`SELECT reap_after_ms FROM agent_runtime_cluster_instances WHERE instance_id = 'adm-a'`);
    expect(reap_after_ms).toBe(1900);
    // back on the network, A retakes its lock, clears its mark and admits again
    proxy.restore();
    await eventually(() => a.instance.live && a.controller.connected, 10_000, 'A to come back');
    const [{ dead }] = await h().sql<{ dead: boolean }>(`SELECT dead_since IS NOT NULL AS dead FROM agent_runtime_cluster_instances WHERE instance_id = 'adm-a'`);
    expect(dead).toBe(false);
    expect((await a.controller.submit('x')).status).toBe('queued');
  });

  it('an instance that retakes its lock within its grace keeps its permits, and its first-seen-dead mark is cleared', async () => {
    const config = { globalLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };
    const quick = { initialMs: 10, maxMs: 10 };
    const a = await clusterNode(h(), 'adm-a', config, { reapIntervalMs: 20, instanceBackoff: quick, lockGraceMs: 2000, lockGraceMarginMs: 500 });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 20 });
    const held = await a.controller.acquire('x');
    const waiter = b.controller.submit('x');
    expect((await waiter).status).toBe('queued');
    const lockSessions = () =>
      h().sql<{ pid: number }>(
        `SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
          WHERE a.datname = current_database() AND a.application_name = 'adm-a'`,
      );
    const [before] = await lockSessions();
    expect(await terminateLockSession(h(), 'adm-a')).toBe(1);
    // the retake is quicker than any poll of `live` could see it false: a new lock session shows it
    await eventually(async () => a.instance.live && (await lockSessions()).some(({ pid }) => pid !== before.pid), 5000, 'A to retake its lock on a new session');
    await sleep(3000);
    expect(held.signal.aborted).toBe(false);
    expect(await rowCounts(h())).toEqual({ permits: 1, queue: 1 });
    const [{ dead }] = await h().sql<{ dead: boolean }>(`SELECT dead_since IS NOT NULL AS dead FROM agent_runtime_cluster_instances WHERE instance_id = 'adm-a'`);
    expect(dead).toBe(false);
  });

  it('a second instance with other limits fails start with cluster_config_mismatch; the same limits start', async () => {
    await clusterNode(h(), 'adm-a', { globalLimit: 4, agentLimits: { x: 1 } });
    const same = await clusterNode(h(), 'adm-b', { globalLimit: 4, agentLimits: { x: 1 }, defaultQueueTimeoutMs: 5 });
    expect(same.controller.connected).toBe(true);
    const other = await clusterNode(h(), 'adm-c', { globalLimit: 4, agentLimits: { x: 2 } }, { startController: false });
    const mismatch = await rejected<AdmissionError>(other.controller.start());
    expect(mismatch.code).toBe('cluster_config_mismatch');
    const [{ fingerprint }] = await h().sql<{ fingerprint: string }>('SELECT fingerprint FROM agent_runtime_admission_config');
    expect(mismatch.details).toEqual({ expected: fingerprint, actual: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(mismatch.details?.actual).not.toBe(fingerprint);
    expect(await rejected<AdmissionError>(other.controller.acquire('x'))).toMatchObject({ code: 'admission_store_unavailable' });
  });

  it('start fails with schema_mismatch when a table does not match', async () => {
    await h().sql('ALTER TABLE agent_runtime_admission_queue ADD COLUMN extra text');
    const node = await clusterNode(h(), 'adm-a', {}, { startController: false });
    const error = await rejected<{ code: string; details: { mismatches: unknown[] } }>(node.controller.start());
    expect(error.code).toBe('schema_mismatch');
    expect(error.details.mismatches.length).toBeGreaterThan(0);
  });
});

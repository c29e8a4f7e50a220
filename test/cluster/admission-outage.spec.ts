import type { AdmissionError } from '../../src/admission/admission.errors';
import { rejected } from '../../src/shared/testing/rejected';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { startTcpProxy } from '../support/tcp-proxy';
import { clusterNode, rowCounts } from './admission-fixture';

describe('ClusterAdmissionController fails closed (spec 08 §3)', () => {
  const h = useHarness(() => openDatabaseHarness());
  const config = { globalLimit: 2, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const };

  it('a failing store rejects acquire with admission_store_unavailable (codes only); a release made meanwhile lands later', async () => {
    const a = await clusterNode(h(), 'adm-a', config, { reapIntervalMs: 100 });
    const before = await a.controller.acquire('x');
    await h().sql('ALTER TABLE agent_runtime_admission_permits RENAME TO agent_runtime_admission_permits_away');
    try {
      const error = await rejected<AdmissionError>(a.controller.acquire('x'));
      expect(error.code).toBe('admission_store_unavailable');
      expect(error.details).toEqual({ sqlstate: '42P01', socket_error: null });
      expect(error.message).not.toMatch(/agent_runtime|relation/);
      expect(await rejected<AdmissionError>(a.controller.submit('y'))).toMatchObject({ code: 'admission_store_unavailable' });
      expect(a.controller.status().instance).toEqual({ active: 1, queued: 0 });
      expect(before.signal.aborted).toBe(false);
      expect(a.controller.release(before)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await h().sql('ALTER TABLE agent_runtime_admission_permits_away RENAME TO agent_runtime_admission_permits');
    }
    await eventually(async () => {
      const counts = await rowCounts(h());
      return counts.permits === 0 && counts.queue === 0;
    }, 10_000, 'the retried release to land');
    const after = await a.controller.acquire('x');
    a.controller.release(after);
    await eventually(async () => (await rowCounts(h())).permits === 0);
  });

  it('an unreachable database admits nothing; after recovery the instance admits again and leaves no stuck rows', async () => {
    const proxy = await startTcpProxy(h().database.url);
    h().track(() => proxy.sever());
    const a = await clusterNode(h(), 'adm-a', config, { url: proxy.url, reapIntervalMs: 100, instanceBackoff: { initialMs: 50, maxMs: 200 } });
    const b = await clusterNode(h(), 'adm-b', config, { reapIntervalMs: 100 });
    proxy.cut();
    for (let i = 0; i < 5; i++) {
      const error = await rejected<AdmissionError>(a.controller.acquire('x'));
      expect(error.code).toBe('admission_store_unavailable');
    }
    expect(a.controller.status().instance).toEqual({ active: 0, queued: 0 });
    await eventually(() => !a.controller.connected, 5000, 'readiness down');
    expect((await rowCounts(h())).permits).toBe(0);
    const onB = await b.controller.acquire('x');
    proxy.restore();
    await eventually(() => a.controller.connected, 15_000, 'readiness up');
    const onA = await eventually(() => a.controller.acquire('x').catch(() => null), 15_000, 'A to admit again');
    a.controller.release(onA);
    b.controller.release(onB);
    await eventually(async () => {
      const counts = await rowCounts(h());
      return counts.permits === 0 && counts.queue === 0;
    }, 10_000, 'no stuck rows');
  }, 60_000);

  it('stop deletes what the instance still holds and queues, and the capacity goes to the other instance', async () => {
    const a = await clusterNode(h(), 'adm-a', { ...config, globalLimit: 1 }, { reapIntervalMs: 60_000 });
    const b = await clusterNode(h(), 'adm-b', { ...config, globalLimit: 1 }, { reapIntervalMs: 60_000 });
    const held = await a.controller.acquire('x');
    const queuedOnA = a.controller.acquire('x');
    await eventually(async () => (await rowCounts(h())).queue === 1);
    const waiting = b.controller.acquire('x');
    await eventually(async () => (await rowCounts(h())).queue === 2);
    await a.controller.stop();
    expect(held.signal.reason).toMatchObject({ details: { outcome: 'owner_down' } });
    expect(await rejected<AdmissionError>(queuedOnA)).toMatchObject({ code: 'deployment_draining' });
    expect((await waiting).agentId).toBe('x');
    const rows = await h().sql<{ instance_id: string }>('SELECT instance_id FROM agent_runtime_admission_permits UNION ALL SELECT instance_id FROM agent_runtime_admission_queue');
    expect(rows).toEqual([{ instance_id: 'adm-b' }]);
    expect(await rejected<AdmissionError>(a.controller.acquire('x'))).toMatchObject({ code: 'deployment_draining' });
  });
});

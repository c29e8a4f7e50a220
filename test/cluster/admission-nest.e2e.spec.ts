/**
 * Cluster admission through real Nest apps (spec 08 §3, §6): two apps, each with its own pool and
 * its own `ClusterModule` instance, on one database; `@Admission` routes unchanged.
 */
import { Controller, Get, Param } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admission } from '../../src/admission/admission.decorator';
import { AdmissionModule } from '../../src/admission/admission.module';
import { ADMISSION_SERVICE } from '../../src/admission/admission.constants';
import { ClusterAdmissionController } from '../../src/admission/cluster/cluster-admission-controller';
import { ClusterModule } from '../../src/cluster/cluster.module';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { TestApp } from '../e2e/support/harness';

/** Handlers count themselves in and out, across both apps of the process. */
const inside = { now: 0, max: 0, byAgent: new Map<string, number>(), maxByAgent: new Map<string, number>() };

@Controller('cluster')
class ClusterWorkController {
  @Get(':agent/:ms')
  @Admission((context) => context.switchToHttp().getRequest<{ params: { agent: string } }>().params.agent, { overflow: 'queue' })
  async work(@Param('agent') agent: string, @Param('ms') ms: string): Promise<{ ok: true }> {
    inside.now += 1;
    inside.max = Math.max(inside.max, inside.now);
    const mine = (inside.byAgent.get(agent) ?? 0) + 1;
    inside.byAgent.set(agent, mine);
    inside.maxByAgent.set(agent, Math.max(inside.maxByAgent.get(agent) ?? 0, mine));
    try {
      await sleep(Number(ms));
    } finally {
      inside.now -= 1;
      inside.byAgent.set(agent, (inside.byAgent.get(agent) ?? 1) - 1);
    }
    return { ok: true };
  }
}

const LIMITS = { globalLimit: 4, defaultAgentLimit: 2, overflow: 'queue' as const, maxQueue: 100, defaultQueueTimeoutMs: 30_000, drainTimeoutMs: 2000 };

describe('cluster admission across two Nest apps (spec 08 §3)', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  async function instance(instanceId: string, limits: object = LIMITS): Promise<TestApp> {
    const app = await TestApp.start({
      admissionModule: AdmissionModule.forRoot({ ...limits, cluster: { reapIntervalMs: 200 } }),
      imports: [TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(harness().database.url)), ClusterModule.forRoot({ instanceId })],
      controllers: [ClusterWorkController],
    });
    // closed with the harness, before its database is dropped
    harness().track(() => app.dispose());
    return app;
  }

  it('provides the cluster controller under ADMISSION_SERVICE', async () => {
    const a = await instance('node-a');
    expect(a.app.get(ADMISSION_SERVICE)).toBeInstanceOf(ClusterAdmissionController);
  });

  it('never lets more than 4 run cluster-wide, nor 2 of one agent, with 50 concurrent requests over 2 apps; every request is served', async () => {
    const [a, b] = [await instance('node-a'), await instance('node-b')];
    inside.max = 0;
    inside.maxByAgent.clear();
    let sampledMax = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [{ n }] = await harness().sql<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime_admission_permits');
        sampledMax = Math.max(sampledMax, n);
        await sleep(5);
      }
    })();
    const calls = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).http.get(`/cluster/agent-${i % 3}/${10 + (i % 4) * 5}`).result);
    const results = await Promise.all(calls);
    sampling = false;
    await sampler;
    expect(results.map((result) => result.status)).toEqual(Array(50).fill(200));
    expect(inside.max).toBeLessThanOrEqual(4);
    expect(inside.max).toBeGreaterThan(1);
    expect(Math.max(...inside.maxByAgent.values())).toBeLessThanOrEqual(2);
    expect(sampledMax).toBeLessThanOrEqual(4);
    await eventually(async () => (await harness().sql('SELECT 1 FROM agent_runtime_admission_permits UNION ALL SELECT 1 FROM agent_runtime_admission_queue')).length === 0);
  }, 60_000);

  it('refuses to start a second app whose limits differ: cluster_config_mismatch', async () => {
    await instance('node-a');
    await expect(instance('node-b', { ...LIMITS, globalLimit: 8 })).rejects.toMatchObject({ code: 'cluster_config_mismatch' });
  });

  it('answers 503 admission_store_unavailable with Retry-After while the tables cannot be used, and serves again afterwards', async () => {
    const a = await instance('node-a');
    await harness().sql('ALTER TABLE agent_runtime_admission_permits RENAME TO agent_runtime_admission_permits_away');
    try {
      const during = await a.http.get('/cluster/x/0').result;
      expect(during.status).toBe(503);
      expect(during.body).toEqual({ status_code: 503, error: 'Service Unavailable', code: 'admission_store_unavailable' });
      expect(during.headers['retry-after']).toBe('1');
    } finally {
      await harness().sql('ALTER TABLE agent_runtime_admission_permits_away RENAME TO agent_runtime_admission_permits');
    }
    expect((await a.http.get('/cluster/x/0').result).status).toBe(200);
  });
});

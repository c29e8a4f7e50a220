import { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import { rejected } from '../../src/shared/testing/rejected';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { clusterNode } from './admission-fixture';

const flowRows = (h: ReturnType<ReturnType<typeof useHarness<Awaited<ReturnType<typeof openDatabaseHarness>>>>>) =>
  h.sql<{ buckets: number; tags: number; adaptive: number }>(
    `SELECT (SELECT count(*) FROM agent_runtime_admission_buckets)::int AS buckets, (SELECT count(*) FROM agent_runtime_admission_fair_tags)::int AS tags,
            (SELECT count(*) FROM agent_runtime_admission_adaptive)::int AS adaptive`,
  );

describe('ClusterAdmissionController with flow control across instances (spec 09 §9)', () => {
  const h = useHarness(() => openDatabaseHarness());

  it('a tenant limit is shared by two instances: the third permit of the tenant is refused, another tenant still admitted', async () => {
    const config = { tenantLimits: { acme: 2 } };
    const a = await clusterNode(h(), 'flow-a', config);
    const b = await clusterNode(h(), 'flow-b', config);
    await a.controller.acquire('agent', { tenant: 'acme' });
    await b.controller.acquire('agent', { tenant: 'acme' });
    const error = await rejected(a.controller.acquire('agent', { tenant: 'acme' }), AdmissionError);
    expect(error.code).toBe('concurrency_limit_reached');
    expect(error.details).toEqual({ limit_scope: 'tenant' });
    await b.controller.acquire('agent', { tenant: 'other' });
    const status = b.controller.status();
    expect(status.per_tenant).toEqual({ acme: { active: 2, queued: 0, limit: 2, cost_in_use: 2 }, other: { active: 1, queued: 0, limit: 'infinity', cost_in_use: 1 } });
    expect(status.other_tenants).toEqual({ count: 0, active: 0, queued: 0 });
    expect(a.events.find((event) => event.outcome === 'rejected')).toMatchObject({ agent_id: 'agent', tenant_id: 'acme' });
  });

  it('a rate is shared: burst 2 over two instances, then rate_limited with retry_after_ms; a queued request is granted when the bucket refills, with no other event', async () => {
    const config = { overflow: 'reject' as const, rates: { tenants: { acme: { requestsPerMinute: 120, burst: 2 } } } };
    const a = await clusterNode(h(), 'rate-a', config);
    const b = await clusterNode(h(), 'rate-b', config);
    const first = await a.controller.acquire('agent', { tenant: 'acme' });
    await b.controller.acquire('agent', { tenant: 'acme' });
    a.controller.release(first);
    const error = await rejected(a.controller.acquire('agent', { tenant: 'acme' }), AdmissionError);
    expect(error.code).toBe('rate_limited');
    expect(error.details).toMatchObject({ limit_scope: 'tenant' });
    const retry = (error.details as { retry_after_ms: number }).retry_after_ms;
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(500);
    expect(a.outcomes()).toContain('rate_limited');
    const started = Date.now();
    const queued = await b.controller.submit('agent', { tenant: 'acme', overflow: 'queue', queueTimeoutMs: 10_000 });
    expect(queued.status).toBe('queued');
    await b.controller.await(queued.requestRef);
    expect(Date.now() - started).toBeGreaterThanOrEqual(retry - 100);
  });

  it('rate buckets are decided under the lock: 20 concurrent submits over two instances with burst 5 grant exactly 5', async () => {
    const config = { rates: { global: { requestsPerMinute: 1, burst: 5 } } };
    const a = await clusterNode(h(), 'burst-a', config);
    const b = await clusterNode(h(), 'burst-b', config);
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).controller.submit(`agent-${i % 3}`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refusals = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as AdmissionError).code);
    expect(refusals).toEqual(Array(15).fill('rate_limited'));
    expect((await flowRows(h()))[0].buckets).toBe(1);
  });

  it('cost limits hold across instances; a cost above a limit is refused at submit whatever the overflow; settle corrects the cost bucket', async () => {
    const config = { globalCostLimit: 10, rates: { global: { costPerMinute: 6, burstCost: 10 } } };
    const a = await clusterNode(h(), 'cost-a', config);
    const b = await clusterNode(h(), 'cost-b', config);
    const big = await a.controller.acquire('agent', { cost: 6 });
    expect((await h().sql<{ cost: number }>('SELECT cost FROM agent_runtime_admission_buckets'))[0].cost).toBeCloseTo(4, 1);
    const error = await rejected(b.controller.submit('agent', { cost: 5 }), AdmissionError);
    expect([error.code, error.details]).toEqual(['concurrency_limit_reached', { limit_scope: 'global', limit_kind: 'cost' }]);
    const oversize = await rejected(b.controller.submit('agent', { cost: 11, overflow: 'queue' }), AdmissionError);
    expect(oversize.details).toEqual({ limit_scope: 'global', limit_kind: 'cost' });
    expect(b.controller.status()).toMatchObject({ cost_in_use: 6, per_agent: { agent: { cost_in_use: 6 } } });
    big.settle(0);
    a.controller.release(big);
    // the bucket got the 6 back, so it is full again and dropped: a cost of 10 passes at once (without the settle it waits about 60 s)
    await eventually(async () => (await flowRows(h()))[0].buckets === 0, 5000, 'the settle applied by the next decision of its instance');
    await expect(b.controller.submit('agent', { cost: 10 })).resolves.toMatchObject({ status: 'granted' });
  });

  it('an adaptive limit is cluster-wide: an overloaded report on one instance lowers what the other may grant', async () => {
    const config = { agentLimits: { model: 4 }, adaptive: { model: { min: 1, backoffRatio: 0.5, decreaseIntervalMs: 0 } } };
    const a = await clusterNode(h(), 'aimd-a', config);
    const b = await clusterNode(h(), 'aimd-b', config);
    const permit = await a.controller.acquire('model');
    expect(a.controller.status().per_agent.model).toMatchObject({ limit: 4, effective_limit: 4 });
    permit.report({ outcome: 'overloaded' });
    await eventually(async () => (await h().sql<{ effective_limit: number }>('SELECT effective_limit FROM agent_runtime_admission_adaptive'))[0]?.effective_limit === 2);
    await b.controller.acquire('model');
    const error = await rejected(b.controller.acquire('model'), AdmissionError);
    expect([error.code, error.details]).toEqual(['concurrency_limit_reached', { limit_scope: 'agent' }]);
    expect(b.controller.status().per_agent.model).toMatchObject({ active: 2, limit: 4, effective_limit: 2 });
  });

  it('fair share across instances: one tenant with 10 queued on one instance, three tenants with one each on the other, agent limit 1: the three come first', async () => {
    const config = { defaultAgentLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const, tenantWeights: { big: 1 } };
    const a = await clusterNode(h(), 'fair-a', config);
    const b = await clusterNode(h(), 'fair-b', config);
    const held = await a.controller.acquire('agent', { tenant: 'big' });
    const order: string[] = [];
    const chain = (node: typeof a, tenant: string) =>
      node.controller.acquire('agent', { tenant }).then((permit: Permit) => {
        order.push(tenant);
        node.controller.release(permit);
      });
    const waits: Array<Promise<void>> = [];
    for (let i = 0; i < 10; i++) waits.push(chain(a, 'big'));
    await eventually(() => a.controller.status().queue_length === 10);
    for (const tenant of ['s1', 's2', 's3']) waits.push(chain(b, tenant));
    await eventually(() => b.controller.status().queue_length === 13);
    a.controller.release(held);
    await Promise.all(waits);
    expect(order.slice(0, 3).sort()).toEqual(['s1', 's2', 's3']);
    expect(order.filter((t) => t === 'big')).toHaveLength(10);
    // every tenant went idle: their finish tags are forgotten, only the virtual time stays
    await eventually(async () => (await flowRows(h()))[0].tags === 1);
  });

  it('priorities across instances: a high request queued later on another instance is granted before normal ones', async () => {
    const config = { defaultAgentLimit: 1, overflow: 'queue' as const, defaultQueueTimeoutMs: 'infinity' as const, priorityAgingMs: 'infinity' as const };
    const a = await clusterNode(h(), 'prio-a', config);
    const b = await clusterNode(h(), 'prio-b', config);
    const held = await a.controller.acquire('agent');
    const order: string[] = [];
    const wait = (node: typeof a, name: string, opts: object) => node.controller.acquire('agent', opts).then((p) => (order.push(name), node.controller.release(p)));
    const waits = [wait(a, 'n1', { tenant: 't1' }), wait(a, 'n2', { tenant: 't2' })];
    await eventually(() => a.controller.status().queue_length === 2);
    waits.push(wait(b, 'h', { tenant: 't3', priority: 'high' }));
    await eventually(() => b.controller.status().queue_length === 3);
    a.controller.release(held);
    await Promise.all(waits);
    expect(order[0]).toBe('h');
  });

  it('without any flow option the flow tables stay empty and records keep spec 01 shapes', async () => {
    const a = await clusterNode(h(), 'plain-a', { overflow: 'queue' });
    const permit = await a.controller.acquire('agent', { tenant: 'acme', cost: 5 });
    const status = a.controller.status();
    expect(status).not.toHaveProperty('per_tenant');
    expect(status).not.toHaveProperty('cost_in_use');
    expect(status.per_agent.agent).toEqual({ active: 1, queued: 0, limit: 64 });
    permit.settle(1);
    permit.report({ outcome: 'overloaded' });
    a.controller.release(permit);
    await a.controller.acquire('agent');
    expect((await flowRows(h()))[0]).toEqual({ buckets: 0, tags: 0, adaptive: 0 });
  });

  it('instances with different flow options refuse to share a cluster (cluster_config_mismatch)', async () => {
    await clusterNode(h(), 'cfg-a', { tenantLimits: { acme: 2 } });
    const error = await rejected(clusterNode(h(), 'cfg-b', { tenantLimits: { acme: 3 } }), AdmissionError);
    expect(error.code).toBe('cluster_config_mismatch');
  });
});

/**
 * Spec 09 §7 and §8 (status keys only where configured, top tenants and the rest folded, `tenant_id`
 * only for named tenants) and the compatibility rule (no option: spec 01's records exactly). Run on
 * every variant (ADMISSION_VARIANTS=local for this one); the memory test is local only.
 */
import { AdmissionController } from '../../src/admission/admission-controller';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, admissionSuite, granted } from '../support/admission-controller-fixture';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup, variant, localOnly } = admissionSuite(variantName);

  describe('§8 compatibility of shapes', () => {
    it('without a flow-control option, status and telemetry are spec 01 records even for requests with tenant, cost and priority', async () => {
      const { controller, events, settle } = await setup({ defaultAgentLimit: 1 });
      await controller.submit('a', { tenant: 't', cost: 5, priority: 'high' });
      await settle();
      const status = variant.coreStatus(controller.status());
      expect(Object.keys(status).sort()).toEqual(['active', 'available', 'drain_started_at', 'draining', 'global_limit', 'max_queue', 'overflow', 'per_agent', 'queue_length']);
      expect(status.per_agent.a).toEqual({ active: 1, queued: 0, limit: 1 });
      expect(Object.keys(events[0]).sort()).toEqual(['active', 'agent_id', 'outcome', 'queued', 'wait_ms']);
    });

    it('each key appears only with its option: per_tenant/other_tenants with a tenant option, cost_in_use with a cost limit', async () => {
      const rated = variant.coreStatus((await setup({ rates: { global: { requestsPerMinute: 10 } } })).controller.status());
      expect(rated).not.toHaveProperty('per_tenant');
      expect(rated).not.toHaveProperty('cost_in_use');
      const tenanted = variant.coreStatus((await setup({ rates: { defaultTenant: { requestsPerMinute: 10 } } })).controller.status());
      expect(tenanted).toMatchObject({ per_tenant: {}, other_tenants: { count: 0, active: 0, queued: 0 } });
      expect(tenanted).not.toHaveProperty('cost_in_use');
      const costed = (await setup({ agentCostLimits: { a: 5 } })).controller;
      await costed.submit('a', { cost: 2 });
      const status = variant.coreStatus(costed.status());
      expect(status.cost_in_use).toBe(2);
      expect(status.per_agent.a).toEqual({ active: 1, queued: 0, limit: 64, cost_in_use: 2 });
      expect(status).not.toHaveProperty('per_tenant');
    });
  });

  describe('§7 status and telemetry', () => {
    it('per_tenant lists the 20 tenants with the most work and other_tenants folds the rest', async () => {
      const { controller } = await setup({ defaultTenantLimit: 100, tenantLimits: { t00: 7 }, overflow: 'queue', defaultAgentLimit: 1000, globalLimit: 1000 });
      for (let t = 0; t < 25; t++) {
        const tenant = `t${String(t).padStart(2, '0')}`;
        for (let i = 0; i <= 25 - t; i++) await controller.submit('a', { tenant, cost: 2 });
      }
      const status = controller.status();
      const perTenant = status.per_tenant as NonNullable<typeof status.per_tenant>;
      expect(Object.keys(perTenant)).toHaveLength(20);
      expect(perTenant.t00).toEqual({ active: 7, queued: 19, limit: 7, cost_in_use: 14 });
      expect(perTenant.t19).toEqual({ active: 7, queued: 0, limit: 100, cost_in_use: 14 });
      expect(perTenant).not.toHaveProperty('t20');
      expect(status.other_tenants).toEqual({ count: 5, active: 6 + 5 + 4 + 3 + 2, queued: 0 });
    });

    it('telemetry carries tenant_id only for tenants named in configuration', async () => {
      const { controller, events, settle } = await setup({ tenantWeights: { named: 2 }, defaultTenantLimit: 1 });
      const permit = granted(await controller.submit('a', { tenant: 'named' }));
      await controller.submit('a', { tenant: 'anonymous' });
      controller.release(permit);
      await settle();
      expect(events.map((event) => [event.outcome, event.tenant_id])).toEqual([
        ['granted', 'named'],
        ['granted', undefined],
        ['released', 'named'],
      ]);
      expect(events[1]).not.toHaveProperty('tenant_id');
    });
  });

  localOnly('memory: a tenant is forgotten once it has no work and its buckets are full again', () => {
    const clock = new ManualClock();
    const controller = new AdmissionController({ defaultTenantLimit: 2, rates: { defaultTenant: { requestsPerMinute: 600 } } }, { clock });
    const tenants = (controller as unknown as { flows: { tenants: Map<string, unknown>; agents: Map<string, unknown> } }).flows;
    for (let i = 0; i < 10_000; i++) controller.release(granted(controller.submit('a', { tenant: `t${i}` }) as never));
    // each bucket refills in 100 ms: the lazy sweep forgets them as later operations run
    clock.advance(100);
    expect(tenants.tenants.size).toBe(10_000);
    for (let i = 0; i < 5_000; i++) controller.release(granted(controller.submit('b') as never));
    expect(tenants.tenants.size).toBe(0);
    // agents (ids from the application's code) are kept while there are few of them
    expect(tenants.agents.size).toBe(2);
  });
});

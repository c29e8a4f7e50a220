/**
 * Spec 09 §1, §2, §8, §10: three scopes (global, agent, tenant) with permit and cost limits, one
 * decision over them, refusals naming the first refusing scope (agent, tenant, global), `limit_kind`
 * only for cost, oversize costs refused whatever the overflow, FIFO within a flow and
 * work-conserving dispatch across flows. Run on every variant (ADMISSION_VARIANTS=local for this one).
 */
import { ADMISSION_VARIANTS, admissionSuite, granted, refusal } from '../support/admission-controller-fixture';
import { GrantLog } from './flow-testing';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  describe('§2 tenant permit limits', () => {
    it('a tenant holds at most its limit across agents; other tenants and untenanted work are not affected', async () => {
      const { controller } = await setup({ defaultTenantLimit: 2, tenantLimits: { big: 3 } });
      await controller.submit('a', { tenant: 't1' });
      await controller.submit('b', { tenant: 't1' });
      expect(await refusal(() => controller.submit('c', { tenant: 't1' }))).toMatchObject({ code: 'concurrency_limit_reached', details: { limit_scope: 'tenant' } });
      for (let i = 0; i < 3; i++) expect((await controller.submit('a', { tenant: 'big' })).status).toBe('granted');
      expect((await refusal(() => controller.submit('a', { tenant: 'big' }))).details).toEqual({ limit_scope: 'tenant' });
      expect((await controller.submit('a', { tenant: 't2' })).status).toBe('granted');
      expect((await controller.submit('a')).status).toBe('granted');
    });

    it('a queued request of a full tenant is granted when the tenant releases, before a later request of it', async () => {
      const { controller, settle } = await setup({ defaultTenantLimit: 1, overflow: 'queue' });
      const log = new GrantLog(controller);
      await log.take('first', 'a', { tenant: 't' });
      void log.take('second', 'b', { tenant: 't' });
      void log.take('third', 'a', { tenant: 't' });
      await settle();
      expect(log.order).toEqual(['first']);
      log.release('first');
      await settle();
      expect(log.order).toEqual(['first', 'second']);
    });

    it('a count refusal keeps spec 01 details {limit_scope} without limit_kind', async () => {
      const { controller } = await setup({ globalLimit: 1, defaultTenantLimit: 5 });
      await controller.submit('a', { tenant: 't' });
      const error = await refusal(() => controller.submit('b', { tenant: 't' }));
      expect(error.details).toEqual({ limit_scope: 'global' });
    });
  });

  describe('§2 cost limits', () => {
    it('held cost + cost must stay within each cost limit; refusals carry limit_kind cost', async () => {
      const { controller } = await setup({ agentCostLimits: { a: 10 }, defaultTenantCostLimit: 8, globalCostLimit: 12 });
      await controller.submit('a', { cost: 6, tenant: 't' });
      expect((await refusal(() => controller.submit('a', { cost: 5, tenant: 'u' }))).details).toEqual({ limit_scope: 'agent', limit_kind: 'cost' });
      expect((await refusal(() => controller.submit('b', { cost: 3, tenant: 't' }))).details).toEqual({ limit_scope: 'tenant', limit_kind: 'cost' });
      expect((await controller.submit('b', { cost: 6, tenant: 'u' })).status).toBe('granted');
      expect((await refusal(() => controller.submit('b', { cost: 0.5 }))).details).toEqual({ limit_scope: 'global', limit_kind: 'cost' });
      expect((await controller.submit('b', { cost: 0 })).status).toBe('granted');
    });

    it('a cost above a cost limit alone is refused at submit even with overflow queue, naming the first scope', async () => {
      const { controller, events, settle } = await setup({ overflow: 'queue', defaultAgentCostLimit: 100, defaultTenantCostLimit: 50, globalCostLimit: 20 });
      for (const [cost, scope] of [
        [101, 'agent'],
        [51, 'tenant'],
        [21, 'global'],
      ] as const) {
        const error = await refusal(() => controller.submit('a', { cost, tenant: 't' }));
        expect(error).toMatchObject({ code: 'concurrency_limit_reached', details: { limit_scope: scope, limit_kind: 'cost' } });
      }
      expect((await controller.submit('a', { cost: 20, tenant: 't' })).status).toBe('granted');
      await settle();
      expect(events.map((event) => event.outcome)).toEqual(['rejected', 'rejected', 'rejected', 'granted']);
      expect(controller.status().queue_length).toBe(0);
    });

    it('when several scopes refuse, limit_scope names agent, then tenant, then global', async () => {
      const { controller } = await setup({ globalLimit: 2, defaultAgentLimit: 1, defaultTenantLimit: 1 });
      await controller.submit('a', { tenant: 't' });
      await controller.submit('b', { tenant: 'u' });
      expect((await refusal(() => controller.submit('a', { tenant: 't' }))).details).toEqual({ limit_scope: 'agent' });
      expect((await refusal(() => controller.submit('c', { tenant: 't' }))).details).toEqual({ limit_scope: 'tenant' });
      expect((await refusal(() => controller.submit('c', { tenant: 'v' }))).details).toEqual({ limit_scope: 'global' });
    });

    it('cost in use returns to 0 after releases of fractional costs', async () => {
      const { controller } = await setup({ globalCostLimit: 10, defaultAgentCostLimit: 10, defaultTenantCostLimit: 10 });
      const permits = [];
      for (const cost of [0.1, 0.2, 0.7, 1e-9, 3.3]) permits.push(granted(await controller.submit('a', { cost, tenant: 't' })));
      expect(controller.status().cost_in_use).toBeCloseTo(4.3 + 1e-9, 9);
      for (const permit of permits) controller.release(permit);
      const status = controller.status();
      expect(status.cost_in_use).toBe(0);
      expect(status.per_agent).toEqual({});
      expect(status.per_tenant).toEqual({});
    });
  });

  describe('§8 grants at submit and dispatch across flows', () => {
    it('a cheaper later request never passes an older one of its flow', async () => {
      const { controller, settle } = await setup({ defaultAgentCostLimit: 10, overflow: 'queue' });
      const log = new GrantLog(controller);
      await log.take('held', 'a', { cost: 6, tenant: 't' });
      void log.take('big', 'a', { cost: 5, tenant: 't' });
      void log.take('small', 'a', { cost: 1, tenant: 't' });
      await settle();
      expect(log.order).toEqual(['held']);
      expect(controller.status().queue_length).toBe(2);
      log.release('held');
      await settle();
      expect(log.order).toEqual(['held', 'big', 'small']);
    });

    it('dispatch is work-conserving across flows: a request that fits goes before an older one of another flow that does not', async () => {
      const { controller, settle } = await setup({ defaultAgentCostLimit: 10, overflow: 'queue' });
      const log = new GrantLog(controller);
      await log.take('held', 'a', { cost: 6, tenant: 't' });
      void log.take('big', 'a', { cost: 5, tenant: 't' });
      void log.take('other', 'a', { cost: 4, tenant: 'u' });
      await settle();
      expect(log.order).toEqual(['held', 'other']);
      log.release('held');
      await settle();
      expect(log.order).toEqual(['held', 'other', 'big']);
    });

    it('a flow refused by its tenant does not hold back another tenant of the same agent', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 2, tenantLimits: { t: 1 }, overflow: 'queue' });
      const log = new GrantLog(controller);
      await log.take('t1', 'a', { tenant: 't' });
      await log.take('u1', 'a', { tenant: 'u' });
      void log.take('t2', 'a', { tenant: 't' });
      void log.take('u2', 'a', { tenant: 'u' });
      await settle();
      log.release('u1');
      await settle();
      expect(log.order).toEqual(['t1', 'u1', 'u2']);
      log.release('t1');
      await settle();
      expect(log.order).toEqual(['t1', 'u1', 'u2', 't2']);
    });

    it('with reject, a request behind a queued request of its flow is refused with the reason the head waits', async () => {
      const { controller } = await setup({ defaultAgentCostLimit: 10 });
      await controller.submit('a', { cost: 6, tenant: 't' });
      await controller.submit('a', { cost: 5, tenant: 't', overflow: 'queue' });
      const error = await refusal(() => controller.submit('a', { cost: 1, tenant: 't' }));
      expect(error).toMatchObject({ code: 'concurrency_limit_reached', details: { limit_scope: 'agent', limit_kind: 'cost' } });
    });
  });
});

/**
 * Spec 09 §5 (token buckets per scope, `rate_limited {limit_scope, retry_after_ms}` with exact values on a
 * manual clock, queueing until the rate allows within the deadline, `permit.settle` corrections) and
 * §8's refusal order for rates. Run on every variant (ADMISSION_VARIANTS=local for this one).
 */
import { ADMISSION_VARIANTS, admissionSuite, granted, refusal } from '../support/admission-controller-fixture';
import { GrantLog } from './flow-testing';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup, localOnly } = admissionSuite(variantName);

  describe('§5 request rate', () => {
    it('overflow reject past the burst answers rate_limited with the exact wait, and telemetry says rate_limited', async () => {
      const { controller, clock, events, settle } = await setup({ rates: { agents: { a: { requestsPerMinute: 60, burst: 2 } } } });
      controller.release(granted(await controller.submit('a')));
      controller.release(granted(await controller.submit('a')));
      expect(await refusal(() => controller.submit('a'))).toMatchObject({ code: 'rate_limited', details: { limit_scope: 'agent', retry_after_ms: 1000 } });
      clock.advance(250);
      expect((await refusal(() => controller.submit('a'))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 750 });
      clock.advance(749.5);
      expect((await refusal(() => controller.submit('a'))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 1 });
      clock.advance(0.5);
      expect((await controller.submit('a')).status).toBe('granted');
      expect((await controller.submit('b')).status).toBe('granted');
      await settle();
      expect(events.map((event) => event.outcome)).toEqual(['granted', 'released', 'granted', 'released', 'rate_limited', 'rate_limited', 'rate_limited', 'granted', 'granted']);
    });

    it('overflow queue waits for the rate with one timer, and is granted at the instant the bucket allows', async () => {
      const { controller, clock, settle, timers } = await setup({ overflow: 'queue', defaultQueueTimeoutMs: 'infinity', rates: { global: { requestsPerMinute: 6 } } });
      const log = new GrantLog(controller);
      await log.take('first', 'a');
      void log.take('second', 'b');
      void log.take('third', 'a');
      await settle();
      expect(timers()).toBe(1);
      clock.advance(9999);
      await settle();
      expect(log.order).toEqual(['first']);
      clock.advance(1);
      await settle();
      expect(log.order).toEqual(['first', 'second']);
      clock.advance(10_000);
      await settle();
      expect(log.order).toEqual(['first', 'second', 'third']);
      expect(timers()).toBe(0);
    });

    it('the deadline still bounds a wait for the rate', async () => {
      const { controller, clock, settle } = await setup({ overflow: 'queue', rates: { defaultAgent: { requestsPerMinute: 1 } } });
      await controller.submit('a');
      const waiting = controller.acquire('a', { queueTimeoutMs: 500 });
      clock.advance(500);
      await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      await settle();
      expect(controller.status().queue_length).toBe(0);
    });

    it('a permit or cost refusal is named before a rate refusal', async () => {
      const { controller } = await setup({ defaultAgentLimit: 1, rates: { global: { requestsPerMinute: 1 } } });
      await controller.submit('a');
      expect((await refusal(() => controller.submit('a'))).details).toEqual({ limit_scope: 'agent' });
      expect((await refusal(() => controller.submit('b'))).details).toEqual({ limit_scope: 'global', retry_after_ms: 60_000 });
    });

    it('rate refusals name agent, then tenant, then global', async () => {
      const { controller } = await setup({ rates: { defaultAgent: { requestsPerMinute: 60 }, defaultTenant: { requestsPerMinute: 30 }, global: { requestsPerMinute: 2, burst: 3 } } });
      await controller.submit('a', { tenant: 't' });
      expect((await refusal(() => controller.submit('a', { tenant: 't' }))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 1000 });
      expect((await refusal(() => controller.submit('b', { tenant: 't' }))).details).toEqual({ limit_scope: 'tenant', retry_after_ms: 2000 });
      await controller.submit('b', { tenant: 'u' });
      await controller.submit('c', { tenant: 'v' });
      expect((await refusal(() => controller.submit('d', { tenant: 'w' }))).details).toEqual({ limit_scope: 'global', retry_after_ms: 30_000 });
    });

    it('named tenant rates override defaultTenant', async () => {
      const { controller } = await setup({ rates: { defaultTenant: { requestsPerMinute: 1 }, tenants: { vip: { requestsPerMinute: 60, burst: 3 } } } });
      for (let i = 0; i < 3; i++) await controller.submit('a', { tenant: 'vip' });
      expect((await refusal(() => controller.submit('a', { tenant: 'vip' }))).details).toEqual({ limit_scope: 'tenant', retry_after_ms: 1000 });
      await controller.submit('a', { tenant: 'plain' });
      expect((await refusal(() => controller.submit('a', { tenant: 'plain' }))).details).toEqual({ limit_scope: 'tenant', retry_after_ms: 60_000 });
    });
  });

  describe('§5 cost rate', () => {
    it('a request needs min(cost, burstCost) tokens and takes its whole cost', async () => {
      const { controller, clock } = await setup({ rates: { agents: { a: { costPerMinute: 600 } } } });
      // 10 per second, one second's worth of capacity
      await controller.submit('a', { cost: 4 });
      await controller.submit('a', { cost: 4 });
      expect((await refusal(() => controller.submit('a', { cost: 4 }))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 200 });
      clock.advance(200);
      await controller.submit('a', { cost: 4 });
      expect((await refusal(() => controller.submit('a', { cost: 1 }))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 100 });
    });

    it('a request above burstCost waits for a full bucket and then drives it below zero', async () => {
      const { controller, clock } = await setup({ rates: { agents: { a: { costPerMinute: 600, burstCost: 10 } } } });
      await controller.submit('a', { cost: 1 });
      expect((await refusal(() => controller.submit('a', { cost: 30 }))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 100 });
      clock.advance(100);
      await controller.submit('a', { cost: 30 });
      expect((await refusal(() => controller.submit('a', { cost: 1 }))).details).toEqual({ limit_scope: 'agent', retry_after_ms: 2100 });
    });

    it('settle gives back cost − actual (capped at the capacity) or makes later requests wait for the debt; cost_in_use is unchanged', async () => {
      const { controller } = await setup({ globalCostLimit: 1000, rates: { global: { costPerMinute: 60, burstCost: 10 } } });
      const big = granted(await controller.submit('a', { cost: 10 }));
      expect((await refusal(() => controller.submit('a', { cost: 8 }))).details).toEqual({ limit_scope: 'global', retry_after_ms: 8000 });
      expect(big.settle(2)).toBeUndefined();
      expect(controller.status().cost_in_use).toBe(10);
      const next = granted(await controller.submit('a', { cost: 8 }));
      next.settle(19);
      expect((await refusal(() => controller.submit('a', { cost: 1 }))).details).toEqual({ limit_scope: 'global', retry_after_ms: 12_000 });
      expect(controller.status().cost_in_use).toBe(18);
    });

    it('a settle after release still charges the debt to the scopes of the permit, even once their state was dropped', async () => {
      const { controller, clock } = await setup({ rates: { tenants: { t: { costPerMinute: 60, burstCost: 5 } } } });
      const permit = granted(await controller.submit('a', { tenant: 't', cost: 1 }));
      clock.advance(1000);
      // full again at release: the tenant's state is dropped, and the settle starts from full buckets
      controller.release(permit);
      permit.settle(6);
      expect((await refusal(() => controller.submit('a', { tenant: 't', cost: 1 }))).details).toEqual({ limit_scope: 'tenant', retry_after_ms: 1000 });
    });
  });

  localOnly('a queued rate-limited request is granted from inside the timer with counts consistent in telemetry', async () => {
    const { controller, clock, events, settle } = await setup({ overflow: 'queue', rates: { defaultAgent: { requestsPerMinute: 60 } } });
    await controller.submit('a');
    await controller.submit('a');
    clock.advance(1000);
    await settle();
    expect(events.map((event) => [event.outcome, event.active, event.queued])).toEqual([
      ['granted', 1, 0],
      ['queued', 1, 1],
      ['granted', 2, 0],
    ]);
  });
});

/**
 * Spec 09 §3 (start-time fair queueing across tenants, FIFO within a flow, no credit banked while
 * idle) and §4 (classes and aging, the starvation bound). Run on every variant (ADMISSION_VARIANTS=local for this one).
 */
import { ADMISSION_VARIANTS, admissionSuite } from '../support/admission-controller-fixture';
import { GrantLog } from './flow-testing';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  describe('§3 fair share', () => {
    it('acceptance: with one tenant 1,000 deep and nine with one each, the nine are granted within the next 10 grants', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', maxQueue: 2000, defaultQueueTimeoutMs: 'infinity', defaultTenantLimit: 'infinity' });
      const log = new GrantLog(controller);
      await log.take('flood-0', 'a', { tenant: 'flood' });
      for (let i = 1; i <= 1000; i++) void log.take(`flood-${i}`, 'a', { tenant: 'flood' });
      for (let i = 1; i <= 9; i++) void log.take(`small-${i}`, 'a', { tenant: `small-${i}` });
      await settle();
      expect(controller.status().queue_length).toBe(1009);
      await log.releaseInTurn(10, settle);
      const next10 = log.order.slice(1, 11);
      for (let i = 1; i <= 9; i++) expect(next10).toContain(`small-${i}`);
      // a cluster submit is one transaction each: 1,010 of them take seconds
    }, 120_000);

    it('two backlogged tenants share grants by weight', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', maxQueue: 100, tenantWeights: { heavy: 2, light: 1 } });
      const log = new GrantLog(controller);
      await log.take('hold', 'a', { tenant: 'other' });
      for (let i = 0; i < 30; i++) void log.take(`heavy-${i}`, 'a', { tenant: 'heavy' });
      for (let i = 0; i < 30; i++) void log.take(`light-${i}`, 'a', { tenant: 'light' });
      await settle();
      await log.releaseInTurn(30, settle);
      const served = log.order.slice(1);
      const heavy = served.filter((label) => label.startsWith('heavy')).length;
      expect(served).toHaveLength(30);
      expect(Math.abs(heavy / 2 - (30 - heavy))).toBeLessThanOrEqual(1 / 2 + 1);
    });

    it('a tenant forgets its finish tag when it has no work: no debt is carried past idleness', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', maxQueue: 100, defaultTenantLimit: 'infinity' });
      const log = new GrantLog(controller);
      await log.take('hold', 'a', { tenant: 'x' });
      const refs = [];
      for (let i = 0; i < 10; i++) refs.push((await controller.submit('a', { tenant: 't' })).requestRef);
      for (const ref of refs) controller.cancel(ref);
      for (let i = 0; i < 3; i++) void log.take(`u-${i}`, 'a', { tenant: 'u' });
      void log.take('t-back', 'a', { tenant: 't' });
      await settle();
      await log.releaseInTurn(4, settle);
      expect(log.order).toEqual(['hold', 'u-0', 't-back', 'u-1', 'u-2']);
    });

    it('requests without a tenant form one FIFO flow per agent, competing with tenants at weight 1', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', maxQueue: 100, defaultTenantLimit: 'infinity' });
      const log = new GrantLog(controller);
      await log.take('hold', 'a');
      for (let i = 0; i < 3; i++) void log.take(`none-${i}`, 'a');
      for (let i = 0; i < 3; i++) void log.take(`t-${i}`, 'a', { tenant: 't' });
      await settle();
      await log.releaseInTurn(6, settle);
      // hold, granted at submit, took the untenanted flow's first tag [0, 1): its next request starts at 1
      expect(log.order).toEqual(['hold', 't-0', 'none-0', 't-1', 'none-1', 't-2', 'none-2']);
    });
  });

  describe('§4 priorities', () => {
    it('among flows, high goes before normal before low', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', priorityAgingMs: 'infinity' });
      const log = new GrantLog(controller);
      await log.take('hold', 'a', { tenant: 'x' });
      void log.take('low', 'a', { tenant: 'l', priority: 'low' });
      void log.take('normal', 'a', { tenant: 'n' });
      void log.take('high', 'a', { tenant: 'h', priority: 'high' });
      await settle();
      await log.releaseInTurn(3, settle);
      expect(log.order).toEqual(['hold', 'high', 'normal', 'low']);
    });

    it('within a flow FIFO wins over class', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', priorityAgingMs: 'infinity' });
      const log = new GrantLog(controller);
      await log.take('hold', 'a', { tenant: 't' });
      void log.take('low', 'a', { tenant: 't', priority: 'low' });
      void log.take('high', 'a', { tenant: 't', priority: 'high' });
      void log.take('other-normal', 'a', { tenant: 'u' });
      await settle();
      await log.releaseInTurn(3, settle);
      // the flow of t competes with its head (low), so u's normal request goes first
      expect(log.order).toEqual(['hold', 'other-normal', 'low', 'high']);
    });

    it('starvation bound: a low request competes in the top class after 2 × priorityAgingMs, not before one aging step', async () => {
      const { controller, clock, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', maxQueue: 1000, defaultQueueTimeoutMs: 'infinity', priorityAgingMs: 1000 });
      const log = new GrantLog(controller);
      await log.take('hold', 'a', { tenant: 'h' });
      const queuedAt = clock.monotonicNow();
      void log.take('low', 'a', { tenant: 'l', priority: 'low' });
      let n = 0;
      void log.take(`high-${n++}`, 'a', { tenant: 'h', priority: 'high' });
      // both are queued (a cluster submit is a decision of its own) before the first release
      await settle();
      let grantedAt = -1;
      while (grantedAt < 0) {
        clock.advance(100);
        void log.take(`high-${n++}`, 'a', { tenant: 'h', priority: 'high' });
        log.releaseOldest();
        await settle();
        if (log.order.includes('low')) grantedAt = clock.monotonicNow();
        expect(n).toBeLessThan(100);
      }
      expect(grantedAt - queuedAt).toBeGreaterThanOrEqual(2000);
      expect(grantedAt - queuedAt).toBeLessThanOrEqual(2000 + 100);
    });

    it.each([
      ['after one aging period a low request competes as normal and wins on its older start tag', 1000, 1000, 'low'],
      ["priorityAgingMs 'infinity' turns aging off", 'infinity', 1_000_000, 'normal'],
    ] as const)('%s', async (_name, priorityAgingMs, waitedMs, first) => {
      const { controller, clock, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', priorityAgingMs, defaultQueueTimeoutMs: 'infinity' });
      const log = new GrantLog(controller);
      await log.take('hold', 'a', { tenant: 'x' });
      void log.take('low', 'a', { tenant: 'l', priority: 'low' });
      clock.advance(waitedMs);
      void log.take('normal', 'a', { tenant: 'n' });
      await settle();
      await log.releaseInTurn(1, settle);
      expect(log.order).toEqual(['hold', first]);
    });
  });
});

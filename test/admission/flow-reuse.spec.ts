/**
 * Flow mode's reuse of dropped states (a tenant's scope, a tenanted flow) and its lazily moved aging
 * records: a reused state takes its new tenant's and agent's limits, and a head that replaced an older
 * one still ages at its own instants, neither earlier nor later. Run on every variant
 * (ADMISSION_VARIANTS=local for this one).
 */
import { ADMISSION_VARIANTS, admissionSuite, granted, refusal } from '../support/admission-controller-fixture';
import { GrantLog } from './flow-testing';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  it("a dropped tenant's state reused for another tenant takes that tenant's limit and counts from zero", async () => {
    const { controller } = await setup({ defaultTenantLimit: 4, tenantLimits: { one: 1 } });
    for (let i = 0; i < 3; i++) controller.release(granted(await controller.submit('a', { tenant: `gone-${i}` })));
    await controller.submit('a', { tenant: 'one' });
    expect(await refusal(() => controller.submit('b', { tenant: 'one' }))).toMatchObject({ code: 'concurrency_limit_reached', details: { limit_scope: 'tenant' } });
    for (let i = 0; i < 4; i++) await controller.submit(`c${i}`, { tenant: 'four' });
    expect(await refusal(() => controller.submit('d', { tenant: 'four' }))).toMatchObject({ details: { limit_scope: 'tenant' } });
  });

  it("a dropped flow reused for another agent counts against that agent's limit, not its former one", async () => {
    const { controller } = await setup({ defaultTenantLimit: 4, defaultAgentLimit: 4, agentLimits: { solo: 1 } });
    controller.release(granted(await controller.submit('wide', { tenant: 'x' })));
    await controller.submit('solo', { tenant: 'y' });
    expect(await refusal(() => controller.submit('solo', { tenant: 'z' }))).toMatchObject({ details: { limit_scope: 'agent' } });
    for (let i = 0; i < 4; i++) await controller.submit('wide', { tenant: `w${i}` });
    expect(await refusal(() => controller.submit('wide', { tenant: 'w9' }))).toMatchObject({ details: { limit_scope: 'agent' } });
  });

  it('a head that replaced an older one ages from its own submit time, not before', async () => {
    const { controller, clock, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue', priorityAgingMs: 1000, defaultQueueTimeoutMs: 'infinity' });
    const log = new GrantLog(controller);
    await log.take('hold', 'a', { tenant: 'hold' });
    const early = await controller.submit('a', { tenant: 'x' });
    clock.advance(400);
    void log.take('late', 'a', { tenant: 'x' });
    clock.advance(100);
    await controller.cancel(early.requestRef);
    clock.advance(100);
    void log.take('high', 'a', { tenant: 'h', priority: 'high' });
    await settle();
    // t = 1300: the old head's instant (1000) has passed, the new head's (1400) has not
    clock.advance(700);
    log.release('hold');
    await settle();
    expect(log.order).toEqual(['hold', 'high']);
    // t = 1450: a normal request with an older start tag than 'late' (x's tag carries the cancelled one's cost)
    clock.advance(150);
    void log.take('normal', 'a', { tenant: 'n' });
    await settle();
    // t = 1500: 'late' has waited 1100 ms, so it competes as high and goes first
    clock.advance(50);
    log.release('high');
    await settle();
    expect(log.order).toEqual(['hold', 'high', 'late']);
  });
});

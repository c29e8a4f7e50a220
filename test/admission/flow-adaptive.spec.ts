/**
 * Spec 09 §6 (AIMD effective limits, visible in `status()`) and §8 (`settle` and `report`: synchronous,
 * once each, validated, allowed after revocation). Run on every variant (ADMISSION_VARIANTS=local for this one).
 */
import { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import { ADMISSION_VARIANTS, admissionSuite, granted, refusal, thrown } from '../support/admission-controller-fixture';
import { GrantLog } from './flow-testing';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  describe('§6 adaptive limits', () => {
    it('the effective limit starts at the static limit and shows in status only for adaptive agents', async () => {
      const { controller } = await setup({ agentLimits: { a: 4 }, adaptive: { a: { min: 1 } } });
      await controller.submit('a');
      await controller.submit('b');
      const status = controller.status();
      expect(status.per_agent.a).toEqual({ active: 1, queued: 0, limit: 4, effective_limit: 4 });
      expect(status.per_agent.b).toEqual({ active: 1, queued: 0, limit: 64 });
    });

    it('an overloaded report lowers L to max(min, floor(L × backoffRatio)) at most once per decreaseIntervalMs', async () => {
      const { controller, clock } = await setup({ agentLimits: { a: 10 }, adaptive: { a: { min: 2, backoffRatio: 0.5, decreaseIntervalMs: 1000 } } });
      const permits: Permit[] = [];
      for (let i = 0; i < 3; i++) permits.push(granted(await controller.submit('a')));
      permits[0].report({ outcome: 'overloaded' });
      expect(controller.status().per_agent.a.effective_limit).toBe(5);
      permits[1].report({ outcome: 'overloaded', latencyMs: 12 });
      expect(controller.status().per_agent.a.effective_limit).toBe(5);
      clock.advance(1000);
      permits[2].report({ outcome: 'overloaded' });
      expect(controller.status().per_agent.a.effective_limit).toBe(2);
      controller.release(permits[0]);
      controller.release(permits[1]);
      const more = granted(await controller.submit('a'));
      clock.advance(1000);
      more.report({ outcome: 'overloaded' });
      expect(controller.status().per_agent.a.effective_limit).toBe(2);
    });

    it('lowering L revokes nothing and gates new grants until the agent holds fewer than L', async () => {
      const { controller } = await setup({ agentLimits: { a: 4 }, adaptive: { a: { min: 1, backoffRatio: 0.5 } } });
      const permits: Permit[] = [];
      for (let i = 0; i < 4; i++) permits.push(granted(await controller.submit('a')));
      permits[0].report({ outcome: 'overloaded' });
      expect(controller.status().per_agent.a).toMatchObject({ active: 4, effective_limit: 2 });
      controller.release(permits[0]);
      controller.release(permits[1]);
      expect((await refusal(() => controller.submit('a'))).details).toEqual({ limit_scope: 'agent' });
      controller.release(permits[2]);
      expect((await controller.submit('a')).status).toBe('granted');
    });

    it('L saturated ok reports raise L by one, unsaturated ones do not count, and a queued request is granted at once', async () => {
      const { controller, clock, settle } = await setup({ overflow: 'queue', agentLimits: { a: 4 }, adaptive: { a: { min: 1, backoffRatio: 0.5 } } });
      const log = new GrantLog(controller);
      const first = (await log.take('first', 'a')) as Permit;
      first.report({ outcome: 'overloaded' });
      clock.advance(1000);
      const second = (await log.take('second', 'a')) as Permit; // held 2 ≥ L 2: saturated
      void log.take('queued', 'a');
      await settle();
      expect(controller.status().per_agent.a).toMatchObject({ active: 2, queued: 1, effective_limit: 2 });
      controller.release(first);
      await settle();
      expect(log.order).toEqual(['first', 'second', 'queued']); // held 2 again, saturated
      const third = log.permits.get('queued') as Permit;
      second.report({ outcome: 'ok' });
      expect(controller.status().per_agent.a.effective_limit).toBe(2);
      third.report({ outcome: 'ok' });
      expect(controller.status().per_agent.a.effective_limit).toBe(3);
      const fourth = granted(await controller.submit('a')); // held 3 ≥ 3: saturated
      const fifth = await refusal(() => controller.submit('a', { overflow: 'reject' }));
      expect(fifth.details).toEqual({ limit_scope: 'agent' });
      controller.release(second);
      const unsaturated = granted(await controller.submit('a'));
      unsaturated.report({ outcome: 'ok' });
      expect(controller.status().per_agent.a.effective_limit).toBe(3);
      fourth.report({ outcome: 'ok' });
      expect(controller.status().per_agent.a.effective_limit).toBe(3);
    });

    it('an agent without an adaptive entry ignores reports', async () => {
      const { controller } = await setup({ defaultAgentLimit: 1, adaptive: { other: { min: 1 } } });
      const permit = granted(await controller.submit('a'));
      expect(permit.report({ outcome: 'overloaded' })).toBeUndefined();
      expect(controller.status().per_agent.a).toEqual({ active: 1, queued: 0, limit: 1 });
    });

    it('L never grows past the static limit', async () => {
      const { controller } = await setup({ agentLimits: { a: 1 }, adaptive: { a: { min: 1 } } });
      for (let i = 0; i < 3; i++) {
        const permit = granted(await controller.submit('a'));
        permit.report({ outcome: 'ok' });
        controller.release(permit);
      }
      expect((await controller.submit('a')).status).toBe('granted');
      expect(controller.status().per_agent.a.effective_limit).toBe(1);
    });
  });

  describe('§8 settle and report', () => {
    it('each is allowed once, returns undefined, and works after the permit was released', async () => {
      const { controller } = await setup({ adaptive: { a: { min: 1 } } });
      const permit = granted(await controller.submit('a'));
      controller.release(permit);
      expect(permit.settle(3)).toBeUndefined();
      expect(permit.report({ outcome: 'ok', latencyMs: 5 })).toBeUndefined();
      expect(thrown(() => permit.settle(3))).toMatchObject({ code: 'invalid_settle' });
      expect(thrown(() => permit.report({ outcome: 'ok' }))).toMatchObject({ code: 'invalid_report' });
    });

    it('bad values throw and do not use up the one allowed call', async () => {
      const { controller } = await setup();
      const permit = granted(await controller.submit('a'));
      for (const bad of [NaN, -1, Infinity, '2', undefined, null]) {
        const error = thrown(() => permit.settle(bad as number));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('invalid_settle');
      }
      for (const bad of [undefined, {}, { outcome: 'fine' }, { outcome: 'ok', latencyMs: -1 }, { outcome: 'ok', latencyMs: NaN }, { outcome: 'ok', latencyMs: '3' }]) {
        expect(thrown(() => permit.report(bad as never)).code).toBe('invalid_report');
      }
      const getter = { get outcome() {
        throw new Error('never run');
      } };
      expect(thrown(() => permit.report(getter as never)).code).toBe('invalid_report');
      expect(permit.settle(0)).toBeUndefined();
      expect(permit.report({ outcome: 'overloaded' })).toBeUndefined();
    });

    it('a receiver that is not an issued permit throws', async () => {
      const { controller } = await setup();
      const permit = granted(await controller.submit('a'));
      const copy = Object.create(permit) as Permit;
      expect(thrown(() => permit.settle.call({}, 1)).code).toBe('invalid_settle');
      expect(thrown(() => copy.settle(1)).code).toBe('invalid_settle');
      expect(thrown(() => permit.report.call({}, { outcome: 'ok' })).code).toBe('invalid_report');
      expect(permit.settle(1)).toBeUndefined();
    });
  });
});

/**
 * Spec 09 §1, §2 and §8 "Validity": request options `tenant`, `cost`, `priority`, and the
 * configuration options with `details.field` paths that carry `*` instead of ids. Run on every
 * variant (ADMISSION_VARIANTS=local for this one).
 */
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import { ADMISSION_VARIANTS, admissionSuite, refusal } from '../support/admission-controller-fixture';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  describe('§1 request options', () => {
    it.each([
      ['tenant', ''],
      ['tenant', 'control\u0007char'],
      ['tenant', 5],
      ['cost', -1],
      ['cost', NaN],
      ['cost', Infinity],
      ['cost', 2 ** 31 + 1],
      ['cost', '1'],
      ['priority', 'urgent'],
      ['priority', 'toString'],
      ['priority', 2],
    ])('%s %p is refused with invalid_admission_options {field}', async (field, value) => {
      const { controller, events, settle } = await setup({ defaultTenantLimit: 10 });
      const error = await refusal(() => controller.submit('a', { [field]: value } as AdmissionRequestOptions));
      expect(error).toMatchObject({ code: 'invalid_admission_options', details: { field } });
      await settle();
      expect(events).toEqual([]);
    });

    it('valid values are accepted, with or without flow-control configuration', async () => {
      for (const config of [undefined, { globalCostLimit: 2 ** 32 }]) {
        const { controller } = await setup(config);
        for (const opts of [{ tenant: 't-1.x:y' }, { cost: 0 }, { cost: 2 ** 31 }, { cost: 0.25 }, { priority: 'low' }, { priority: 'high', tenant: 'z', cost: 3 }] as const) {
          expect((await controller.submit('a', opts)).status).toBe('granted');
        }
      }
    });
  });

  describe('§2 configuration', () => {
    const cases: Array<[string, AdmissionConfig]> = [
      ['defaultTenantLimit', { defaultTenantLimit: 0 }],
      ['defaultTenantLimit', { defaultTenantLimit: 1.5 }],
      ['tenantLimits', { tenantLimits: 3 as never }],
      ['tenantLimits.*', { tenantLimits: { secret: 0 } }],
      ['tenantLimits.*', { tenantLimits: { 'bad\u0000id': 1 } }],
      ['tenantWeights.*', { tenantWeights: { secret: 0 } }],
      ['tenantWeights.*', { tenantWeights: { secret: Infinity } }],
      ['globalCostLimit', { globalCostLimit: 0 }],
      ['defaultAgentCostLimit', { defaultAgentCostLimit: -1 }],
      ['agentCostLimits.*', { agentCostLimits: { secret: NaN } }],
      ['defaultTenantCostLimit', { defaultTenantCostLimit: 'lots' as never }],
      ['tenantCostLimits.*', { tenantCostLimits: { secret: 0 } }],
      ['rates', { rates: 'fast' as never }],
      ['rates.global.requestsPerMinute', { rates: { global: { requestsPerMinute: 0 } } }],
      ['rates.global.costPerMinute', { rates: { global: { costPerMinute: Infinity } } }],
      ['rates.defaultAgent.burst', { rates: { defaultAgent: { requestsPerMinute: 1, burst: 1.5 } } }],
      ['rates.defaultTenant.burstCost', { rates: { defaultTenant: { costPerMinute: 1, burstCost: 0 } } }],
      ['rates.agents.*.burst', { rates: { agents: { secret: { burst: 0 } } } }],
      ['rates.tenants.*.burst', { rates: { tenants: { secret: { requestsPerMinute: 5, burst: 0 } } } }],
      ['rates.tenants.*', { rates: { tenants: { secret: 7 as never } } }],
      ['adaptive.*.min', { adaptive: { secret: { min: 0 } } }],
      ['adaptive.*.min', { agentLimits: { secret: 3 }, adaptive: { secret: { min: 4 } } }],
      ['adaptive.*.algorithm', { adaptive: { secret: { min: 1, algorithm: 'vegas' as never } } }],
      ['adaptive.*.backoffRatio', { adaptive: { secret: { min: 1, backoffRatio: 1 } } }],
      ['adaptive.*.decreaseIntervalMs', { adaptive: { secret: { min: 1, decreaseIntervalMs: -1 } } }],
      ['priorityAgingMs', { priorityAgingMs: 0 }],
      ['priorityAgingMs', { priorityAgingMs: 2.5 }],
    ];

    it.each(cases)('an invalid value is refused with field %s, never with an id or a value', async (field, config) => {
      const error = await refusal(() => setup(config));
      expect(error).toMatchObject({ code: 'invalid_admission_control_config', details: { field } });
      expect(JSON.stringify(error.details)).not.toContain('secret');
      expect(error.message).not.toContain('secret');
    });

    it("'infinity', Infinity and fractions are accepted where the spec allows them", async () => {
      const { controller } = await setup({
        defaultTenantLimit: 'infinity',
        tenantLimits: { t: Infinity },
        tenantWeights: { t: 0.5 },
        globalCostLimit: 10.5,
        defaultAgentCostLimit: 'infinity',
        agentCostLimits: { a: Infinity },
        tenantCostLimits: { t: 0.75 },
        rates: { global: { requestsPerMinute: 0.5, costPerMinute: 1.5, burst: 2, burstCost: 0.1 } },
        adaptive: { a: { min: 64, algorithm: 'aimd', backoffRatio: 0.01, decreaseIntervalMs: 0 } },
        priorityAgingMs: 'infinity',
        unknownKey: true,
      } as AdmissionConfig);
      expect((await controller.submit('a', { tenant: 't', cost: 0.5 })).status).toBe('granted');
    });
  });
});

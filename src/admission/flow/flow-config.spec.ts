import { resolveAdmissionConfig, type AdmissionConfig } from '../admission-config';
import { AdmissionError } from '../admission.errors';

function fieldOf(config: unknown): unknown {
  try {
    resolveAdmissionConfig(config as AdmissionConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(AdmissionError);
    expect((error as AdmissionError).code).toBe('invalid_admission_control_config');
    return (error as AdmissionError).details?.field;
  }
  return 'accepted';
}

describe('flow-control options (spec 09 §2, §8)', () => {
  it('without any option the controller is spec 01 exactly: flowControl false, no tenant or cost keys', () => {
    const config = resolveAdmissionConfig({ globalLimit: 4, futureOption: 1 } as AdmissionConfig);
    expect(config.flowControl).toBe(false);
    expect(config.flow).toMatchObject({ tenantOptions: false, costLimits: false, priorityAgingMs: 10_000, defaultTenantLimit: Infinity });
  });

  it('applies defaults and aliases', () => {
    const { flow, flowControl } = resolveAdmissionConfig({
      defaultTenantLimit: 'infinity',
      tenantLimits: { big: 8, free: Infinity },
      tenantWeights: { big: 2.5 },
      globalCostLimit: 1000.5,
      rates: { tenants: { big: { requestsPerMinute: 120, burst: 4 } }, defaultAgent: { costPerMinute: 600 } },
      adaptive: { a: { min: 1 } },
      priorityAgingMs: 'infinity',
    });
    expect(flowControl).toBe(true);
    expect(flow.tenantLimits.get('free')).toBe(Infinity);
    expect(flow.tenantWeights.get('big')).toBe(2.5);
    expect(flow.globalCostLimit).toBe(1000.5);
    expect(flow.tenantRates.get('big')).toEqual({ requestsPerMs: 0.002, burst: 4, costPerMs: undefined, burstCost: Infinity });
    expect(flow.defaultAgentRate?.burstCost).toBe(10);
    expect(flow.adaptive.get('a')).toEqual({ min: 1, backoffRatio: 0.9, decreaseIntervalMs: 1000 });
    expect(flow.priorityAgingMs).toBe(Infinity);
    expect(flow.tenantOptions).toBe(true);
    expect(flow.costLimits).toBe(true);
    expect([...flow.namedTenants].sort()).toEqual(['big', 'free']);
  });

  it.each([
    [{ defaultTenantLimit: 0 }, 'defaultTenantLimit'],
    [{ defaultTenantLimit: 1.5 }, 'defaultTenantLimit'],
    [{ tenantLimits: { 'secret-tenant': 0 } }, 'tenantLimits.*'],
    [{ tenantLimits: [] }, 'tenantLimits'],
    [{ tenantLimits: { '': 1 } }, 'tenantLimits.*'],
    [{ tenantWeights: { t: 0 } }, 'tenantWeights.*'],
    [{ tenantWeights: { t: Infinity } }, 'tenantWeights.*'],
    [{ globalCostLimit: 0 }, 'globalCostLimit'],
    [{ globalCostLimit: NaN }, 'globalCostLimit'],
    [{ agentCostLimits: { a: -1 } }, 'agentCostLimits.*'],
    [{ defaultTenantCostLimit: 'lots' }, 'defaultTenantCostLimit'],
    [{ rates: 5 }, 'rates'],
    [{ rates: { global: { requestsPerMinute: 0 } } }, 'rates.global.requestsPerMinute'],
    [{ rates: { tenants: { 'secret-tenant': { burst: 2.5 } } } }, 'rates.tenants.*.burst'],
    [{ rates: { agents: { a: { costPerMinute: 6, burstCost: 0 } } } }, 'rates.agents.*.burstCost'],
    [{ adaptive: { a: { min: 0 } } }, 'adaptive.*.min'],
    [{ defaultAgentLimit: 4, adaptive: { a: { min: 5 } } }, 'adaptive.*.min'],
    [{ adaptive: { a: { min: 1, backoffRatio: 1 } } }, 'adaptive.*.backoffRatio'],
    [{ adaptive: { a: { min: 1, algorithm: 'vegas' } } }, 'adaptive.*.algorithm'],
    [{ adaptive: { a: { min: 1, decreaseIntervalMs: -1 } } }, 'adaptive.*.decreaseIntervalMs'],
    [{ priorityAgingMs: 0 }, 'priorityAgingMs'],
    [{ priorityAgingMs: 2.5 }, 'priorityAgingMs'],
  ])('%j is refused with field %s, never an id or a value', (config, field) => {
    expect(fieldOf(config)).toBe(field);
  });

  it('reads no getter and accepts no Proxy', () => {
    let read = false;
    const hostile = { get t() { read = true; return 1; } };
    expect(fieldOf({ tenantLimits: hostile })).toBe('tenantLimits.*');
    expect(fieldOf({ rates: new Proxy({}, {}) })).toBe('rates');
    expect(read).toBe(false);
  });
});

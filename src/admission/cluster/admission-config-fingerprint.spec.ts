import { resolveAdmissionConfig } from '../admission-config';
import { admissionConfigFingerprint } from './admission-config-fingerprint';

const of = (config: Parameters<typeof resolveAdmissionConfig>[0]) => admissionConfigFingerprint(resolveAdmissionConfig(config));

describe('admissionConfigFingerprint', () => {
  it('is the SHA-256 of the canonical JSON of the limits, defaults applied', () => {
    const { limits, fingerprint } = of({});
    expect(limits).toBe('{"agent_limits":{},"default_agent_limit":64,"global_limit":1024,"max_queue":1024,"overflow":"reject"}');
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on the order of agent limits, nor on the timeouts', () => {
    const one = of({ agentLimits: { b: 2, a: 1 }, defaultQueueTimeoutMs: 5, drainTimeoutMs: 10 });
    const two = of({ agentLimits: { a: 1, b: 2 } });
    expect(one).toEqual(two);
  });

  it('changes with every limit, and keeps "__proto__" an ordinary agent id', () => {
    const base = of({}).fingerprint;
    for (const config of [{ globalLimit: 1 }, { defaultAgentLimit: 1 }, { maxQueue: 0 }, { overflow: 'queue' as const }, { agentLimits: { x: 1 } }]) {
      expect(of(config).fingerprint).not.toBe(base);
    }
    expect(of({ agentLimits: JSON.parse('{"__proto__": 3}') }).limits).toContain('"agent_limits":{"__proto__":3}');
  });

  it('includes the flow-control options only when one is given, each of them changing it', () => {
    const base = of({});
    expect(of({ priorityAgingMs: 10000 }).limits).toContain('"flow":{');
    for (const config of [
      { defaultTenantLimit: 2 },
      { tenantLimits: { t: 2 } },
      { tenantWeights: { t: 2 } },
      { globalCostLimit: 10 },
      { agentCostLimits: { a: 10 } },
      { tenantCostLimits: { t: 10 } },
      { rates: { global: { requestsPerMinute: 60 } } },
      { rates: { tenants: { t: { costPerMinute: 60, burstCost: 5 } } } },
      { adaptive: { a: { min: 1 } } },
      { priorityAgingMs: 'infinity' as const },
    ]) {
      expect(of(config).fingerprint).not.toBe(base.fingerprint);
    }
    expect(of({ rates: { global: { requestsPerMinute: 60 } } }).fingerprint).not.toBe(of({ rates: { global: { requestsPerMinute: 61 } } }).fingerprint);
  });
});

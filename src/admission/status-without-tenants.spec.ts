import type { AdmissionStatus } from './admission.types';
import { statusWithoutTenantIds } from './status-without-tenants';

const base: AdmissionStatus = {
  draining: false,
  drain_started_at: null,
  global_limit: 8,
  max_queue: 16,
  active: 5,
  available: 3,
  queue_length: 2,
  overflow: 'queue',
  per_agent: { a: { active: 5, queued: 2, limit: 8 } },
};

describe('statusWithoutTenantIds', () => {
  it('folds every listed tenant into other_tenants, keeping the counts and dropping the ids', () => {
    const status: AdmissionStatus = {
      ...base,
      per_tenant: { acme: { active: 3, queued: 2, limit: 4, cost_in_use: 3 }, globex: { active: 1, queued: 0, limit: 4, cost_in_use: 1 } },
      other_tenants: { count: 5, active: 1, queued: 0 },
    };
    const folded = statusWithoutTenantIds(status);
    expect(folded.per_tenant).toEqual({});
    expect(folded.other_tenants).toEqual({ count: 7, active: 5, queued: 2 });
    expect(JSON.stringify(folded)).not.toMatch(/acme|globex/);
    expect({ ...folded, per_tenant: undefined, other_tenants: undefined }).toEqual({ ...status, per_tenant: undefined, other_tenants: undefined });
  });

  it('leaves a status without tenant keys (no tenant option) as it is', () => {
    expect(statusWithoutTenantIds(base)).toBe(base);
  });
});

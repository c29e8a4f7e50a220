import type { AdmissionStatus } from './admission.types';

/**
 * `status` as a viewer who may not learn which tenants have work sees it: every tenant of
 * `per_tenant` folded into `other_tenants`, so the counts stay and no tenant id is shown (a tenant
 * id usually names a customer). A status without tenant keys is returned as it is.
 *
 * @example
 * return isOperator(principal) ? admission.status() : statusWithoutTenantIds(admission.status());
 */
export function statusWithoutTenantIds<S extends AdmissionStatus>(status: S): S {
  const listed = status.per_tenant;
  if (listed === undefined) return status;
  const other = status.other_tenants ?? { count: 0, active: 0, queued: 0 };
  let [count, active, queued] = [other.count, other.active, other.queued];
  for (const tenant of Object.values(listed)) {
    count++;
    active += tenant.active;
    queued += tenant.queued;
  }
  return Object.freeze({ ...status, per_tenant: Object.freeze({}), other_tenants: Object.freeze({ count, active, queued }) });
}

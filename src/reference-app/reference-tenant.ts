import type { ExecutionContext } from '@nestjs/common';

/** The header that names the tenant an invocation is done for (set by a gateway in front of the service). */
export const TENANT_HEADER = 'x-tenant-id';

/** The tenant of requests without {@link TENANT_HEADER}: they share one tenant's limit and one share of the queue. */
export const ANONYMOUS_TENANT = 'anonymous';

/**
 * The tenant of an admitted route (`@Admission(agent, {tenant: tenantOf})`): the `x-tenant-id` header,
 * else {@link ANONYMOUS_TENANT}. A value that breaks the id rule (an empty one) is refused by the guard
 * with 400 `invalid_tenant_id`.
 */
export function tenantOf(context: ExecutionContext): string {
  // Node joins a repeated custom header with ", " into one string
  const value = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers[TENANT_HEADER];
  return typeof value === 'string' ? value : ANONYMOUS_TENANT;
}

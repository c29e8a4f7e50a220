import type { IncomingMessage } from 'node:http';
import type { ExecutionContext } from '@nestjs/common';

/** The header that names the tenant an invocation is done for (set by a gateway in front of the service). */
export const TENANT_HEADER = 'x-tenant-id';

/** The tenant of requests without {@link TENANT_HEADER}: they share one tenant's limits and its share of the grants. */
export const ANONYMOUS_TENANT = 'anonymous';

/** The answer for a header that names no single tenant: it breaks the id rule, so the guard refuses it. */
const NO_SINGLE_TENANT = '';

/**
 * The tenant of an admitted route (`@Admission(agent, {tenant: tenantOf})`): the `x-tenant-id` header,
 * else {@link ANONYMOUS_TENANT}. A value that breaks the id rule (an empty one) is refused by the guard
 * with 400 `invalid_tenant_id`, and so is a repeated header: Node joins the copies with ", " into a new
 * tenant id, which would let a client whose gateway appends the header (rather than replacing it)
 * escape its tenant's limits and rate.
 */
export function tenantOf(context: ExecutionContext): string {
  const request = context.switchToHttp().getRequest<IncomingMessage>();
  const value = request.headers[TENANT_HEADER];
  if (typeof value !== 'string') return ANONYMOUS_TENANT;
  return request.headersDistinct[TENANT_HEADER]!.length > 1 ? NO_SINGLE_TENANT : value;
}

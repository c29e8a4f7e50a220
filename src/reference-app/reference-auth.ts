import { hasRole, type Principal, type ResolvePrincipal } from '../http/principal';
import type { AuthorizeRun } from '../runner/runs/run-access';

/** The demo users when `REFERENCE_USERS` is not set. */
export const DEFAULT_REFERENCE_USERS = 'alice:alice-token,bob:bob-token,operator:operator-token:approver';

/** The role that may read, follow and confirm any run and see the denials and the traces of every run. */
export const APPROVER_ROLE = 'approver';

/** The cookie the browser console may carry the token in (an `EventSource` cannot send headers). */
export const REFERENCE_TOKEN_COOKIE = 'reference_token';

/** One demo user: a name (the principal id), a bearer token and an optional role. */
export interface ReferenceUser {
  readonly name: string;
  readonly token: string;
  readonly role: string | null;
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const TOKEN = /^[A-Za-z0-9._~+/-]{8,256}$/;

/**
 * The demo users of `REFERENCE_USERS`: comma-separated `name:token` or `name:token:role`. A malformed
 * entry stops start-up with a message naming its position, never its token.
 */
export function referenceUsers(env: NodeJS.ProcessEnv = process.env): readonly ReferenceUser[] {
  const entries = (env.REFERENCE_USERS ?? DEFAULT_REFERENCE_USERS).split(',').map((entry) => entry.trim());
  const users = entries.map((entry, index) => {
    const [name, token, role, ...rest] = entry.split(':');
    if (rest.length > 0 || !NAME.test(name ?? '') || !TOKEN.test(token ?? '') || (role !== undefined && !NAME.test(role))) {
      throw new Error(`REFERENCE_USERS entry ${index + 1} is not name:token or name:token:role (token: 8..256 URL-safe characters)`);
    }
    return Object.freeze({ name: name as string, token: token as string, role: role ?? null });
  });
  if (new Set(users.map((user) => user.token)).size !== users.length) throw new Error('REFERENCE_USERS has a token twice');
  return Object.freeze(users);
}

/** The token of `Authorization: Bearer <token>`, else of the `reference_token` cookie; `undefined` without one. */
function tokenOf(request: unknown): string | undefined {
  const headers = (request as { headers?: Record<string, unknown> }).headers ?? {};
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization !== '') return /^Bearer (\S+)$/i.exec(authorization)?.[1];
  const cookie = headers.cookie;
  if (typeof cookie !== 'string') return undefined;
  for (const part of cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === REFERENCE_TOKEN_COOKIE) return value.join('=');
  }
  return undefined;
}

/** The demo `resolvePrincipal`: the user whose token the request carries, else `null` (401). Tokens are never logged. */
export function referencePrincipalResolver(users: readonly ReferenceUser[]): ResolvePrincipal {
  const byToken = new Map(users.map((user) => [user.token, Object.freeze({ id: user.name, roles: Object.freeze(user.role ? [user.role] : []) })]));
  return (request) => {
    const token = tokenOf(request);
    return (token !== undefined && byToken.get(token)) || null;
  };
}

/** Approvers may read, follow, list and confirm any run; cancelling stays with the owner. */
export const referenceAuthorizeRun: AuthorizeRun = (principal, action) => hasRole(principal, APPROVER_ROLE) && action !== 'cancel';

/** True for an approver: sees the console's denials and which tenants have work (console and `/admission/status`). */
export const isApprover = (principal: Principal): boolean => hasRole(principal, APPROVER_ROLE);

/** The one start-up line about the demo users: names and roles, never tokens. */
export function referenceUsersNotice(users: readonly ReferenceUser[]): string {
  const names = users.map((user) => (user.role ? `${user.name} (${user.role})` : user.name)).join(', ');
  return `demo authentication: Authorization: Bearer <token> for ${names}; these are DEMO tokens from REFERENCE_USERS, not for production`;
}

import { isValidId } from '../shared/ids/id-rule';
import { readOwnData } from '../shared/options/option-reader';
import { isBoolean, isFunction } from '../shared/options/option-rules';
import { PrincipalError } from './principal.errors';

/** Who makes a request, as the application's authentication says: an id and, optionally, roles. */
export interface Principal {
  /** An opaque id (1..256 UTF-8 bytes, no control characters): the owner of runs, the partition of traces. */
  readonly id: string;
  /** What the app's `authorizeRun` may grant on (e.g. `'approver'`). @default none */
  readonly roles?: readonly string[];
}

/**
 * The principal of an HTTP request, typically read from what the app's authentication guard set
 * (`request.user`). `null` means the request is not authenticated.
 */
export type ResolvePrincipal = (request: unknown) => Principal | null | Promise<Principal | null>;

/**
 * The two options every module with routes takes (`RunsModule`, `TraceStoreModule`,
 * `EvaluationModule`, `ConsoleModule`). Without either, the module's routes answer 404.
 */
export interface PrincipalOptions {
  /** The principal of a request; a `null` answer (or a throw, or anything but `{id, roles?}`) is 401 `unauthenticated`. */
  readonly resolvePrincipal?: ResolvePrincipal;
  /**
   * Explicit opt-in to anonymous use: a request without a principal (no resolver, or the resolver
   * answered `null`) is the principal {@link ANONYMOUS_PRINCIPAL_ID}. Everyone anonymous shares its
   * runs and traces; meant for local development. @default false
   */
  readonly allowAnonymous?: boolean;
}

/** The id of the principal anonymous requests act as (with `allowAnonymous: true`). */
export const ANONYMOUS_PRINCIPAL_ID = 'anonymous';

/** The option rules of {@link PrincipalOptions}, spread into each module's own rules. */
export const PRINCIPAL_OPTION_RULES = Object.freeze({ resolvePrincipal: isFunction, allowAnonymous: isBoolean });

const ANONYMOUS: Principal = Object.freeze({ id: ANONYMOUS_PRINCIPAL_ID, roles: Object.freeze([]) });

/**
 * The principal rule of one module: reads a request's principal from validated
 * {@link PrincipalOptions}. No Nest: controllers call it before anything else.
 */
export class PrincipalGate {
  private readonly resolve: ResolvePrincipal | undefined;
  private readonly anonymous: boolean;

  /** `options` are the module's validated values (see {@link PRINCIPAL_OPTION_RULES}). */
  constructor(options: { readonly resolvePrincipal?: unknown; readonly allowAnonymous?: unknown }) {
    this.resolve = options.resolvePrincipal as ResolvePrincipal | undefined;
    this.anonymous = options.allowAnonymous === true;
  }

  /** False when neither a resolver nor anonymous use was given: the routes answer 404. */
  get enabled(): boolean {
    return this.resolve !== undefined || this.anonymous;
  }

  /**
   * The request's principal, frozen. Throws `PrincipalError` `not_found` (404) when disabled and
   * `unauthenticated` (401) when there is none (unless anonymous use is on) or the resolver failed.
   */
  async principalOf(request: unknown): Promise<Principal> {
    if (!this.enabled) throw new PrincipalError('not_found');
    if (this.resolve === undefined) return ANONYMOUS;
    let answer: unknown;
    try {
      answer = await this.resolve(request);
    } catch {
      throw new PrincipalError('unauthenticated');
    }
    if (answer === null || answer === undefined) {
      if (this.anonymous) return ANONYMOUS;
      throw new PrincipalError('unauthenticated');
    }
    const principal = principalValue(answer);
    if (principal === null) throw new PrincipalError('unauthenticated');
    return principal;
  }
}

/** `{id, roles?}` as a fresh frozen principal, or `null` when the value is not one. */
export function principalValue(value: unknown): Principal | null {
  const own = readOwnData(value, ['id', 'roles']);
  if (own === null || own.accessors.length > 0 || !isValidId(own.values.id)) return null;
  const roles = own.values.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((role) => typeof role === 'string')) return null;
  return Object.freeze({ id: own.values.id, roles: Object.freeze([...(roles as string[])]) });
}

/** True when the principal holds `role`. */
export function hasRole(principal: Principal, role: string): boolean {
  return principal.roles?.includes(role) === true;
}

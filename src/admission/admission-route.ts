import { isValidId } from '../shared/ids/id-rule';
import type { AdmissionRequestOptions } from './admission-request';
import type { AdmissionRouteOptions } from './admission.constants';
import { AdmissionError } from './admission.errors';

/** What `@Admission()` stores on a class or handler; resolvers get the request's execution context. */
export interface AdmissionRouteMetadata {
  readonly agent: string | ((context: never) => string);
  readonly options: AdmissionRouteOptions;
}

/** A resolver of the route, called with the execution context (the decorator types it). */
type Resolver = (context: unknown) => unknown;

/** The flow options a route resolves per request. */
type FlowKey = 'tenant' | 'cost' | 'priority';
const FLOW_KEYS: readonly FlowKey[] = ['tenant', 'cost', 'priority'];

/** A route's metadata, read once per handler and class. */
export interface CompiledRoute {
  readonly metadata: AdmissionRouteMetadata;
  /** Whether a request can wait in the queue, so the controller must watch its disconnect. */
  readonly mayQueue: boolean;
  /** The request options every request of the route shares (its fixed values). */
  readonly fixed: AdmissionRequestOptions;
  /** The options resolved from each request; empty for most routes. */
  readonly resolvers: readonly FlowKey[];
}

/** Splits a route's options into the fixed part and the per-request resolvers. */
export function compileRoute(metadata: AdmissionRouteMetadata, controllerOverflow: () => string): CompiledRoute {
  const fixed: Record<string, unknown> = {};
  const resolvers: FlowKey[] = [];
  for (const [key, value] of Object.entries(metadata.options)) {
    if (value === undefined) continue;
    if (typeof value === 'function' && (FLOW_KEYS as readonly string[]).includes(key)) resolvers.push(key as FlowKey);
    else fixed[key] = value;
  }
  const mayQueue = (metadata.options.overflow ?? controllerOverflow()) !== 'reject';
  return { metadata, mayQueue, fixed: Object.freeze(fixed) as AdmissionRequestOptions, resolvers };
}

/**
 * The request options of one request: the route's fixed values and what its resolvers answer. A
 * resolver answering `undefined` leaves the option out (no tenant scope, cost 1, class `normal`). A
 * resolver that throws or answers another wrong type is a broken route (`invalid_admission_options`,
 * 500); a tenant string that breaks the id rule came from the request (`invalid_tenant_id`, 400).
 * Values of the right type are left to the controller's validation.
 */
export function requestOptionsOf(route: CompiledRoute, context: unknown): AdmissionRequestOptions {
  if (route.resolvers.length === 0) return route.fixed;
  const options: Record<string, unknown> = { ...route.fixed };
  for (const key of route.resolvers) options[key] = resolved(key, route.metadata.options[key] as Resolver, context);
  return options as AdmissionRequestOptions;
}

function resolved(key: FlowKey, resolver: Resolver, context: unknown): unknown {
  let value: unknown;
  try {
    value = resolver(context);
  } catch {
    // the resolver's exception text is never exposed
    throw new AdmissionError('invalid_admission_options', { field: key });
  }
  // `undefined` is "not given": no tenant scope, cost 1, class normal
  if (value === undefined) return undefined;
  if (typeof value !== (key === 'cost' ? 'number' : 'string')) throw new AdmissionError('invalid_admission_options', { field: key });
  if (key === 'tenant' && !isValidId(value)) throw new AdmissionError('invalid_tenant_id', { field: key });
  return value;
}

/**
 * The agent id of one request. A fixed id that breaks the id rule, or a resolver that throws or
 * answers a non-string, is a broken route (500); an invalid string from a resolver came from the
 * request (400 `invalid_agent_id`).
 */
export function agentIdOf(source: AdmissionRouteMetadata['agent'], context: unknown): string {
  if (typeof source !== 'function') {
    if (!isValidId(source)) throw new AdmissionError('invalid_admission_options', { field: 'agentId' });
    return source;
  }
  let agentId: unknown;
  try {
    agentId = (source as Resolver)(context);
  } catch {
    agentId = undefined;
  }
  if (typeof agentId !== 'string') throw new AdmissionError('invalid_admission_options', { field: 'agentId' });
  if (!isValidId(agentId)) throw new AdmissionError('invalid_agent_id', { field: 'agentId' });
  return agentId;
}

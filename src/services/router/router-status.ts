import type { ComponentKind } from '../config-reader';
import type { IdleReclamation, RouterRouting } from './router-options';

/** Where a router is in its life: constructed or starting, serving, or stopped for good. */
export type RouterState = 'starting' | 'running' | 'stopped';

/** The router status record (spec 07 §4): counts and settings only, no scope, key, handle or signal. Frozen. */
export interface RouterStatus {
  readonly status: RouterState;
  readonly kind: ComponentKind;
  readonly adapter: string;
  /** Installed workers plus slots reserved by creations in progress. */
  readonly active_scopes: number;
  /** Effective: 1 under `shared`. */
  readonly max_active_scopes: number;
  readonly idle_scope_timeout_ms: number;
  readonly idle_reclamation: IdleReclamation;
  /** Workers reclaimed since the router was built. */
  readonly idle_evictions: number;
  readonly cold_routes_in_flight: number;
  readonly max_router_queue: number;
  readonly cold_route_admission: 'strict_atomic';
  readonly routing: RouterRouting;
  readonly worker_supervision: 'per_generation';
  /** True under `shared`: one adapter, its quotas global. */
  readonly global_quota: boolean;
}

/** The changing part of a status record. */
export interface RouterCounts {
  readonly status: RouterState;
  readonly activeScopes: number;
  readonly idleEvictions: number;
  readonly coldRoutesInFlight: number;
}

/** The fixed part of a status record. */
export interface RouterIdentity {
  readonly kind: ComponentKind;
  readonly routing: RouterRouting;
  readonly adapterId: string;
  readonly capacity: number;
  readonly idleScopeTimeoutMs: number;
  readonly idleReclamation: IdleReclamation;
  readonly maxRouterQueue: number;
}

/** Builds the frozen status record. */
export function routerStatusRecord(identity: RouterIdentity, counts: RouterCounts): RouterStatus {
  return Object.freeze({
    status: counts.status,
    kind: identity.kind,
    adapter: identity.adapterId,
    active_scopes: counts.activeScopes,
    max_active_scopes: identity.capacity,
    idle_scope_timeout_ms: identity.idleScopeTimeoutMs,
    idle_reclamation: identity.idleReclamation,
    idle_evictions: counts.idleEvictions,
    cold_routes_in_flight: counts.coldRoutesInFlight,
    max_router_queue: identity.maxRouterQueue,
    cold_route_admission: 'strict_atomic',
    routing: identity.routing,
    worker_supervision: 'per_generation',
    global_quota: identity.routing === 'shared',
  });
}

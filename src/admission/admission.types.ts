import type { Permit } from './permit';

/** Outcome of one lifecycle transition of a request (spec 01 §6, §8). */
export type AdmissionOutcome =
  | 'granted'
  | 'queued'
  | 'rejected'
  | 'rate_limited'
  | 'queue_full'
  | 'expired'
  | 'cancelled'
  | 'released'
  | 'owner_down'
  | 'requester_down'
  | 'deployment_draining';

/** Payload of `agent_runtime.admission.decision`: totals are counted after the transition. */
export interface AdmissionDecisionEvent {
  readonly wait_ms: number;
  readonly active: number;
  readonly queued: number;
  readonly outcome: AdmissionOutcome;
  readonly agent_id: string;
  /** Present only for a tenant named in the configuration (spec 09 §7). */
  readonly tenant_id?: string;
}

/** What `submit` returns: a permit now, or a place in the queue with the deadline in effect. */
export type SubmitResult =
  | Readonly<{ requestRef: string; status: 'granted'; permit: Permit }>
  | Readonly<{ requestRef: string; status: 'queued'; deadline: number | 'infinity' }>;

/** Per-agent counts in {@link AdmissionStatus}. */
export interface AgentAdmissionStatus {
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
  /** The adaptive limit in force (spec 09 §6); only for an agent listed in `adaptive`. */
  readonly effective_limit?: number;
  /** Sum of the estimated `cost` of its held permits; only with a cost limit configured. */
  readonly cost_in_use?: number;
}

/** Counts of one tenant in {@link AdmissionStatus.per_tenant} (spec 09 §7). */
export interface TenantAdmissionStatus {
  /** Permits the tenant holds, across agents. */
  readonly active: number;
  /** Requests of the tenant waiting, across agents. */
  readonly queued: number;
  /** Its permit limit; `'infinity'` without one. */
  readonly limit: number | 'infinity';
  /** Sum of the estimated `cost` of its held permits. */
  readonly cost_in_use: number;
}

/** The tenants beyond the top 20 of {@link AdmissionStatus.per_tenant}, folded together. */
export interface OtherTenantsStatus {
  /** How many tenants are folded here. */
  readonly count: number;
  /** Permits they hold together. */
  readonly active: number;
  /** Requests of theirs waiting together. */
  readonly queued: number;
}

/**
 * Frozen, JSON-safe status record (spec 01 §5.8). The keys of spec 09 appear only when the
 * configuration holds a flow-control option that concerns them (spec 09 §8).
 */
export interface AdmissionStatus {
  readonly draining: boolean;
  /** Wall-clock ms of the first `beginDrain`, else `null`. */
  readonly drain_started_at: number | null;
  readonly global_limit: number;
  readonly max_queue: number;
  readonly active: number;
  readonly available: number;
  readonly queue_length: number;
  readonly overflow: 'reject' | 'queue';
  /** Only agents with active or queued work; null prototype. */
  readonly per_agent: Readonly<Record<string, AgentAdmissionStatus>>;
  /** Sum of the estimated `cost` of held permits; only with a cost limit configured. */
  readonly cost_in_use?: number;
  /** The 20 tenants with the most active + queued work (null prototype); only with a tenant option. */
  readonly per_tenant?: Readonly<Record<string, TenantAdmissionStatus>>;
  /** Every other tenant with work; only with a tenant option. */
  readonly other_tenants?: OtherTenantsStatus;
}

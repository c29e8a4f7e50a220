import type { AdmissionStatus, AdmissionOutcome, AdmissionDecisionEvent, AgentAdmissionStatus, OtherTenantsStatus, TenantAdmissionStatus } from '../admission.types';
import type { ResolvedFlowConfig } from '../flow/flow-config';

/**
 * The side effects of one controller operation (settlements, signal aborts, telemetry), performed
 * in the order they arose once the state is consistent (spec 01 §9). An effect that calls back into
 * the controller starts a new operation whose effects join the running flush.
 */
export class EffectQueue {
  private readonly effects: Array<() => void> = [];
  private flushing = false;

  push(effect: () => void): void {
    this.effects.push(effect);
  }

  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      for (let i = 0; i < this.effects.length; i++) this.effects[i]();
    } finally {
      this.effects.length = 0;
      this.flushing = false;
    }
  }
}

/** The frozen payload of `agent_runtime.admission.decision` (spec 01 §8): whole, non-negative `wait_ms`. */
export function decisionPayload(outcome: AdmissionOutcome, agentId: string, waitMs: number, active: number, queued: number, tenantId?: string): AdmissionDecisionEvent {
  const payload = { wait_ms: waitMs > 0 ? Math.floor(waitMs) : 0, active, queued, outcome, agent_id: agentId };
  return Object.freeze(tenantId === undefined ? payload : { ...payload, tenant_id: tenantId });
}

/** Counts of one agent as a status record lists them. */
export interface AgentCounts {
  readonly id: string;
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
  /** Spec 09: the adaptive limit in force (shown for adaptive agents) and the cost held (shown with cost limits). */
  readonly effectiveLimit?: number;
  readonly costInUse?: number;
}

/** Counts of one tenant with work (spec 09 §7). */
export interface TenantCounts {
  readonly id: string;
  readonly active: number;
  readonly queued: number;
  /** `Infinity` without a limit. */
  readonly limit: number;
  readonly costInUse: number;
}

/** The tenants `status()` lists by name; the rest are folded into `other_tenants`. */
export const STATUS_TOP_TENANTS = 20;

/** The frozen status record of spec 01 §5.8 from a controller's counts, with spec 09's keys where its options are configured. */
export function admissionStatusRecord(
  state: { readonly draining: boolean; readonly drainStartedAt: number | null; readonly active: number; readonly queued: number; readonly costInUse?: number },
  config: { readonly globalLimit: number; readonly maxQueue: number; readonly overflow: 'reject' | 'queue'; readonly flow: ResolvedFlowConfig },
  agents: Iterable<AgentCounts>,
  tenants: Iterable<TenantCounts> = [],
): AdmissionStatus {
  const flow = config.flow;
  const perAgent = Object.create(null) as Record<string, AgentAdmissionStatus>;
  for (const agent of agents) perAgent[agent.id] = Object.freeze(agentRecord(agent, flow));
  const extra: Record<string, unknown> = {};
  if (flow.costLimits) extra.cost_in_use = state.costInUse ?? 0;
  if (flow.tenantOptions) Object.assign(extra, tenantRecords(tenants));
  return Object.freeze({
    draining: state.draining,
    drain_started_at: state.drainStartedAt,
    global_limit: config.globalLimit,
    max_queue: config.maxQueue,
    active: state.active,
    available: Math.max(0, config.globalLimit - state.active),
    queue_length: state.queued,
    overflow: config.overflow,
    per_agent: Object.freeze(perAgent),
    ...extra,
  });
}

function agentRecord(agent: AgentCounts, flow: ResolvedFlowConfig): AgentAdmissionStatus {
  const record: { -readonly [K in keyof AgentAdmissionStatus]: AgentAdmissionStatus[K] } = { active: agent.active, queued: agent.queued, limit: agent.limit };
  if (flow.adaptive.has(agent.id)) record.effective_limit = agent.effectiveLimit ?? agent.limit;
  if (flow.costLimits) record.cost_in_use = agent.costInUse ?? 0;
  return record;
}

/** The top tenants by active + queued (ties by id), the rest folded. */
function tenantRecords(tenants: Iterable<TenantCounts>): { per_tenant: Readonly<Record<string, TenantAdmissionStatus>>; other_tenants: OtherTenantsStatus } {
  const load = (t: TenantCounts) => t.active + t.queued;
  const top: TenantCounts[] = [];
  const other = { count: 0, active: 0, queued: 0 };
  for (const tenant of tenants) {
    if (tenant.active === 0 && tenant.queued === 0) continue;
    top.push(tenant);
    if (top.length <= STATUS_TOP_TENANTS) continue;
    top.sort((a, b) => load(b) - load(a) || (a.id < b.id ? -1 : 1));
    const dropped = top.pop() as TenantCounts;
    other.count++;
    other.active += dropped.active;
    other.queued += dropped.queued;
  }
  const perTenant = Object.create(null) as Record<string, TenantAdmissionStatus>;
  for (const t of top) perTenant[t.id] = Object.freeze({ active: t.active, queued: t.queued, limit: t.limit === Infinity ? 'infinity' : t.limit, cost_in_use: t.costInUse });
  return { per_tenant: Object.freeze(perTenant), other_tenants: Object.freeze(other) };
}

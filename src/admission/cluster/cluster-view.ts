import type { AgentCounts as AgentRecord, TenantCounts } from '../requests/admission-effects';
import type { AdaptiveState } from '../flow/adaptive-limit';
import type { DecisionOutcome, FlowReading, GrantedRow } from './admission-decisions';

/** A removal of one of this instance's requests, already subtracted from the view. */
export interface Removal {
  readonly agentId: string;
  readonly what: 'active' | 'queued';
  /** Spec 09: the request's tenant and the cost it held (0 for a queued one). */
  readonly tenant?: string;
  readonly cost?: number;
}

/** Counts of one agent across the cluster. */
interface AgentCounts {
  active: number;
  queued: number;
}

interface FlowCounts {
  costInUse: number;
  agentCost: Map<string, number>;
  adaptive: Map<string, AdaptiveState>;
  tenants: Map<string, { active: number; queued: number; limit: number; costInUse: number }>;
}

/**
 * The cluster's counts as the last decision read them (spec 08 §3 status), lowered at once by this
 * instance's own removals so its status and telemetry never lag behind what it did itself; the next
 * decision's reading replaces them. With flow control, also costs, tenants and effective limits (spec 09 §7).
 */
export class ClusterView {
  active = 0;
  queued = 0;
  instancesLive = 0;
  private agents = new Map<string, AgentCounts>();
  private flow: FlowCounts | undefined = undefined;

  private read(counts: DecisionOutcome['counts'], flow: FlowReading | undefined): void {
    this.active = counts.active;
    this.queued = counts.queued;
    this.instancesLive = counts.instancesLive;
    this.agents = new Map([...counts.perAgent].map(([id, agent]) => [id, { active: agent.active, queued: agent.queued }]));
    if (flow === undefined) return;
    this.flow = {
      costInUse: flow.costInUse,
      agentCost: new Map([...flow.agents].map(([id, agent]) => [id, agent.cost])),
      adaptive: new Map([...flow.agents].filter(([, agent]) => agent.adaptive).map(([id, agent]) => [id, { ...(agent.adaptive as AdaptiveState) }])),
      tenants: new Map(flow.tenants.map((t) => [t.id, { active: t.active, queued: t.queued, limit: t.limit, costInUse: t.costInUse }])),
    };
  }

  /**
   * Takes the reading of a decision made while this instance removed `removedSince` (not in its counts
   * yet). `granted` runs for each grant of `instanceId`, the totals then as they stood right after it.
   */
  readDecision(outcome: DecisionOutcome, instanceId: string, removedSince: readonly Removal[], granted: (grant: GrantedRow) => void): void {
    for (const grant of outcome.grants) {
      if (grant.instanceId !== instanceId) continue;
      this.active = grant.activeAfter;
      this.queued = grant.queuedAfter;
      for (const { what } of removedSince) this[what] = Math.max(0, this[what] - 1);
      granted(grant);
    }
    this.read(outcome.counts, outcome.flow);
    for (const removal of removedSince) this.lower(removal);
  }

  /** This instance removed one of its own active or queued requests; returns `removal`. */
  lower(removal: Removal): Removal {
    const { agentId, what } = removal;
    const agent = this.agents.get(agentId);
    if (agent === undefined || agent[what] === 0) return removal;
    agent[what]--;
    this[what]--;
    if (agent.active === 0 && agent.queued === 0) this.agents.delete(agentId);
    if (this.flow !== undefined) this.lowerFlow(removal);
    return removal;
  }

  private lowerFlow(removal: Removal): void {
    const { agentId, what } = removal;
    const flow = this.flow as FlowCounts;
    const cost = removal.cost ?? 0;
    flow.costInUse = Math.max(0, flow.costInUse - cost);
    flow.agentCost.set(agentId, Math.max(0, (flow.agentCost.get(agentId) ?? 0) - cost));
    const tenant = removal.tenant === undefined ? undefined : flow.tenants.get(removal.tenant);
    if (tenant === undefined || tenant[what] === 0) return;
    tenant[what]--;
    tenant.costInUse = Math.max(0, tenant.costInUse - cost);
  }

  /** The agents with work, with the limit `limitOf` gives each (and, with flow control, cost and effective limit). */
  perAgent(limitOf: (agentId: string) => number): AgentRecord[] {
    return [...this.agents].map(([id, counts]) => ({
      id,
      active: counts.active,
      queued: counts.queued,
      limit: limitOf(id),
      ...(this.flow ? { costInUse: this.flow.agentCost.get(id) ?? 0, effectiveLimit: this.flow.adaptive.get(id)?.limit } : {}),
    }));
  }

  /**
   * The AIMD state of an adaptive agent as this view shows it, for a report of this instance the last
   * reading does not hold yet (applied by the next decision; status does not lag behind meanwhile).
   */
  adaptiveOf(agentId: string, initial: () => AdaptiveState): AdaptiveState | undefined {
    if (this.flow === undefined) return undefined;
    let state = this.flow.adaptive.get(agentId);
    if (state === undefined) this.flow.adaptive.set(agentId, (state = initial()));
    return state;
  }

  /** The tenants with work (flow control). */
  tenants(): TenantCounts[] {
    return this.flow ? [...this.flow.tenants].map(([id, t]) => ({ id, ...t })).filter((t) => t.active > 0 || t.queued > 0) : [];
  }

  get costInUse(): number {
    return this.flow?.costInUse ?? 0;
  }
}

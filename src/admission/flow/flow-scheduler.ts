import { agentLimitOf, type ResolvedAdmissionConfig } from '../admission-config';
import type { RequestEntry } from '../admission-queue';
import type { AgentCounts, TenantCounts } from '../requests/admission-effects';
import { applyReport, initialAdaptiveState, type AdaptiveState, type WorkReport } from './adaptive-limit';
import { fairTags } from './fair-share';
import { agentCostLimitOf, agentRateOf, tenantCostLimitOf, tenantLimitOf, tenantRateOf, tenantWeightOf, type ResolvedAdaptive } from './flow-config';
import { FlowQueue } from './flow-queue';
import { AgentFlows, Flow, ScopeState, TenantScope } from './flow-state';
import { isFull, settleCost } from './rate-buckets';
import { refusalOf, takeTokens, type Refusal } from './scope-capacity';

/** The key of the untenanted flow of an agent (tenant ids are never empty). */
const UNTENANTED = '';
/** Idle states with unfull buckets looked at per operation: forgetting is lazy, never a scan. */
const SWEEP_PER_OPERATION = 2;
/**
 * Idle agents kept (up to this many agents in all) so a fleet's agents are not rebuilt at every
 * decision; past it an idle agent is forgotten like a tenant. Agent ids come from the application's
 * code, tenants from its users: only agents are kept.
 */
const KEPT_AGENTS = 1024;
/**
 * Dropped tenant states and tenanted flows kept for reuse (each list at most this long, so memory stays bounded): a workload
 * where tenants come and go would otherwise build and collect both at every decision.
 */
const SPARES = 32;

/**
 * The state of the local controller in flow mode (spec 09): the global scope, agents and tenants with
 * their counts, costs and buckets, the flows and the virtual time `V`, and the AIMD state of adaptive
 * agents. An agent or tenant with neither active nor queued work is forgotten once its buckets are
 * full again (at release, or later by a lazy sweep), so memory follows the work, not every id seen.
 */
export class FlowScheduler {
  readonly global: ScopeState;
  readonly agents = new Map<string, AgentFlows>();
  readonly tenants = new Map<string, TenantScope>();
  readonly queue: FlowQueue;
  private readonly adaptive = new Map<string, { readonly settings: ResolvedAdaptive; readonly state: AdaptiveState }>();
  private virtualTime = 0;
  private readonly idle = new Set<AgentFlows | TenantScope>();
  private readonly spareTenants: TenantScope[] = [];
  private readonly spareFlows: Flow[] = [];

  constructor(
    private readonly config: ResolvedAdmissionConfig,
    now: number,
  ) {
    const flow = config.flow;
    this.global = new ScopeState('global', config.globalLimit, flow.globalCostLimit, flow.globalRate, now);
    this.queue = new FlowQueue(this.global, flow.priorityAgingMs);
    for (const [agentId, settings] of flow.adaptive) this.adaptive.set(agentId, { settings, state: initialAdaptiveState(agentLimitOf(config, agentId)) });
  }

  /** The flow of a request of `agentId` for `tenant`, with its agent's and tenant's states made as needed. */
  flowOf(agentId: string, tenant: string | undefined, now: number): Flow {
    const agent = this.agentState(agentId, now);
    const key = tenant ?? UNTENANTED;
    let flow = agent.byTenant.get(key);
    if (flow === undefined) {
      if (tenant === undefined) flow = new Flow(agent, undefined, this.global);
      else {
        const state = this.tenantState(tenant, now);
        flow = this.spareFlows.pop()?.reuse(agent, state) ?? new Flow(agent, state, this.global);
      }
      agent.byTenant.set(key, flow);
    }
    return flow;
  }

  /** Why a new request of `cost` on `flow` cannot be granted now; `undefined` when it can (spec 09 §8: never past its flow's queue). */
  refusalAtSubmit(flow: Flow, cost: number, now: number): Refusal | undefined {
    const head = flow.queue.head;
    if (head === null) return refusalOf(flow.scopes, cost, now);
    return refusalOf(flow.scopes, head.cost, now) ?? refusalOf(flow.scopes, cost, now) ?? { kind: 'count', scope: 'agent' };
  }

  /** Start tag of `entry` and its owner's new finish tag (spec 09 §3), at enqueue or at a grant at submit. */
  tag(entry: RequestEntry): void {
    const flow = entry.flow as Flow;
    const owner = flow.tenant;
    const tags = fairTags(this.virtualTime, owner ? owner.finish : flow.finish, entry.cost, owner ? owner.weight : 1);
    entry.start = tags.start;
    if (owner) owner.finish = tags.finish;
    else flow.finish = tags.finish;
  }

  /** The queued request to grant next, or `undefined`; parks the flows it finds without capacity. */
  next(now: number): RequestEntry | undefined {
    const queue = this.queue;
    queue.catchUp(now);
    for (let flow = queue.best(); flow; flow = queue.best()) {
      const head = flow.queue.head as RequestEntry;
      const refusal = refusalOf(flow.scopes, head.cost, now);
      if (refusal === undefined) return head;
      if (queue.park(flow, refusal, now)) break;
    }
    queue.dirty = false;
    return undefined;
  }

  /** `entry` is granted: its scopes count it and lose its tokens, `V` becomes its start tag. */
  take(entry: RequestEntry): void {
    const flow = entry.flow as Flow;
    takeTokens(flow.scopes, entry.cost);
    for (let i = 0; i < flow.states.length; i++) {
      const scope = flow.states[i];
      scope.held++;
      scope.costHeld += entry.cost;
    }
    flow.active++;
    this.virtualTime = entry.start;
    entry.saturated = flow.agent.scope.held >= flow.agent.scope.limit;
  }

  /** `entry` gave its permit back: its scopes uncount it, and the flows they parked compete again. */
  give(entry: RequestEntry, now: number): void {
    const flow = entry.flow as Flow;
    for (let i = 0; i < flow.states.length; i++) {
      const scope = flow.states[i];
      scope.held--;
      // sums of fractions drift: an empty scope holds exactly nothing
      scope.costHeld = scope.held === 0 ? 0 : scope.costHeld - entry.cost;
      this.queue.unpark(scope);
    }
    flow.active--;
    this.queue.unblock(flow.agent);
    this.forget(flow, now);
  }

  /** Drops what `flow` no longer needs: the flow when idle, its tenant's `F` and state, its agent's state. */
  forget(flow: Flow, now: number): void {
    if (!flow.idle) return;
    const agent = flow.agent;
    const tenant = flow.tenant;
    if (agent.byTenant.get(tenant?.id ?? UNTENANTED) === flow) {
      agent.byTenant.delete(tenant?.id ?? UNTENANTED);
      if (tenant && this.spareFlows.length < SPARES) this.spareFlows.push(flow);
    }
    if (tenant && tenant.held === 0 && tenant.queued === 0) {
      tenant.finish = undefined;
      this.release(tenant, now);
    }
    if (agent.scope.held === 0 && agent.queued === 0) this.release(agent, now);
    this.sweep(now);
  }

  /** `permit.settle`: the cost buckets of the permit's scopes get `cost − actualCost` back or owe it (spec 09 §5). */
  settle(entry: RequestEntry, actualCost: number, now: number): void {
    const agent = this.agentState(entry.agentId, now);
    const tenant = entry.tenant === undefined ? undefined : this.tenantState(entry.tenant, now);
    for (const scope of [agent.scope, tenant, this.global]) {
      if (scope?.rate === undefined || scope.buckets === undefined) continue;
      settleCost(scope.rate, scope.buckets, entry.cost, actualCost);
    }
    if (tenant && tenant.held === 0 && tenant.queued === 0) this.release(tenant, now);
    if (agent.scope.held === 0 && agent.queued === 0) this.release(agent, now);
  }

  /** `permit.report` (spec 09 §6); `true` when the agent's effective limit grew (a dispatch may grant). */
  report(entry: RequestEntry, report: WorkReport, now: number): boolean {
    const adaptive = this.adaptive.get(entry.agentId);
    if (adaptive === undefined) return false;
    const before = adaptive.state.limit;
    applyReport(adaptive.state, adaptive.settings, agentLimitOf(this.config, entry.agentId), report, entry.saturated, now);
    const agent = this.agents.get(entry.agentId);
    if (agent) {
      agent.scope.limit = adaptive.state.limit;
      this.queue.unblock(agent);
    }
    return adaptive.state.limit > before;
  }

  /** Counts of the agents with work, for `status()`. */
  agentCounts(): AgentCounts[] {
    const counts: AgentCounts[] = [];
    for (const agent of this.agents.values()) {
      if (agent.scope.held === 0 && agent.queued === 0) continue;
      counts.push({ id: agent.id, active: agent.scope.held, queued: agent.queued, limit: agent.limit, effectiveLimit: agent.scope.limit, costInUse: agent.scope.costHeld });
    }
    return counts;
  }

  /** Counts of the tenants with work, for `status()`. */
  *tenantCounts(): Iterable<TenantCounts> {
    for (const t of this.tenants.values()) yield { id: t.id, active: t.held, queued: t.queued, limit: t.limit, costInUse: t.costHeld };
  }

  private agentState(agentId: string, now: number): AgentFlows {
    let agent = this.agents.get(agentId);
    if (agent === undefined) {
      const flow = this.config.flow;
      agent = new AgentFlows(agentId, agentLimitOf(this.config, agentId), agentCostLimitOf(flow, agentId), agentRateOf(flow, agentId), this.adaptive.get(agentId), now);
      this.agents.set(agentId, agent);
    }
    return agent;
  }

  private tenantState(tenant: string, now: number): TenantScope {
    let state = this.tenants.get(tenant);
    if (state === undefined) {
      const flow = this.config.flow;
      const [weight, limit, costLimit, rate] = [tenantWeightOf(flow, tenant), tenantLimitOf(flow, tenant), tenantCostLimitOf(flow, tenant), tenantRateOf(flow, tenant)];
      state = this.spareTenants.pop()?.reuse(tenant, weight, limit, costLimit, rate, now) ?? new TenantScope(tenant, weight, limit, costLimit, rate, now);
      this.tenants.set(tenant, state);
    }
    return state;
  }

  /** An idle state is dropped at once when its buckets are full, else looked at again by later sweeps. */
  private release(state: AgentFlows | TenantScope, now: number): void {
    if (!(state instanceof TenantScope) && this.agents.size <= KEPT_AGENTS) return;
    if (this.canDrop(state, now)) this.drop(state);
    else this.idle.add(state);
  }

  private sweep(now: number): void {
    if (this.idle.size === 0) return;
    let looked = 0;
    for (const state of this.idle) {
      if (looked++ >= SWEEP_PER_OPERATION) return;
      this.idle.delete(state);
      const busy = state instanceof TenantScope ? state.held > 0 || state.queued > 0 : state.scope.held > 0 || state.queued > 0;
      if (busy) continue;
      if (this.canDrop(state, now)) this.drop(state);
      else this.idle.add(state);
    }
  }

  private canDrop(state: AgentFlows | TenantScope, now: number): boolean {
    const scope = state instanceof TenantScope ? state : state.scope;
    return scope.rate === undefined || isFull(scope.rate, scope.buckets as NonNullable<ScopeState['buckets']>, now);
  }

  private drop(state: AgentFlows | TenantScope): void {
    this.idle.delete(state);
    if (state instanceof TenantScope) {
      if (this.tenants.get(state.id) !== state) return;
      this.tenants.delete(state.id);
      if (this.spareTenants.length < SPARES) this.spareTenants.push(state);
    } else if (this.agents.get(state.id) === state) this.agents.delete(state.id);
  }
}

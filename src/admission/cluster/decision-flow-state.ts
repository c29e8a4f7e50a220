import { agentLimitOf, type ResolvedAdmissionConfig } from '../admission-config';
import { initialAdaptiveState, type AdaptiveState } from '../flow/adaptive-limit';
import { agentCostLimitOf, agentRateOf, tenantCostLimitOf, tenantLimitOf, tenantRateOf, type LimitScope, type ResolvedFlowConfig } from '../flow/flow-config';
import { fullBuckets, isFull, refill, type BucketLevels, type ResolvedRate } from '../flow/rate-buckets';
import type { ScopeCheck } from '../flow/scope-capacity';
import type { TransactionClient } from '../../database/transaction-runner';
import type { TenantCounts } from '../requests/admission-effects';
import type { Tally } from './decision-tally';
import { LOAD_FLOW, WRITE_ADAPTIVE, WRITE_BUCKETS, WRITE_TAGS } from './flow-sql';

/** The oldest queued request of one flow, as the decision reads it. */
export interface FlowHead {
  readonly requestId: string;
  readonly agentId: string;
  readonly tenant: string | undefined;
  readonly instanceId: string;
  readonly permitId: string;
  readonly cost: number;
  readonly rank: number;
  readonly start: number;
  readonly seq: number;
  /** Wall-clock ms of the instance that enqueued it. */
  readonly enqueuedAt: number;
}

type HeadRow = [string, string, string | null, string, string, number, number, number, number, number];

/** A head from its row (`LOAD_FLOW`'s array or `NEXT_HEAD`'s record). */
export function headOf(row: HeadRow | Record<string, unknown>): FlowHead {
  const r = Array.isArray(row)
    ? row
    : [row.request_id, row.agent_id, row.tenant_id, row.instance_id, row.permit_id, row.cost, row.rank, row.start_tag, row.seq, row.enqueued_ms];
  const [requestId, agentId, tenant, instanceId, permitId, cost, rank, start, seq, enqueuedAt] = r as HeadRow;
  return { requestId, agentId, tenant: tenant ?? undefined, instanceId, permitId, cost: Number(cost), rank: Number(rank), start: Number(start), seq: Number(seq), enqueuedAt: Number(enqueuedAt) };
}

/** The flow of a request: one per (agent, tenant), one untenanted flow per agent (spec 09 §3). */
export const flowKey = (agentId: string, tenant: string | undefined): string => (tenant === undefined ? `a\u0000${agentId}` : `t\u0000${agentId}\u0000${tenant}`);
/** Who owns a finish tag: the tenant, or the agent's untenanted flow. */
const ownerKey = (agentId: string, tenant: string | undefined): string => (tenant === undefined ? `agent:${agentId}` : `tenant:${tenant}`);
const VIRTUAL_TIME = 'virtual';

interface TenantUse {
  active: number;
  queued: number;
  cost: number;
}

/**
 * The flow-control state of one cluster decision (spec 09 §9): read under the lock after the opening,
 * changed as the decision grants, enqueues, settles and reports, and written back before the commit.
 * Counts of agents stay in the decision's {@link Tally}; costs, tenants, buckets, tags and adaptive
 * limits are here.
 */
export class DecisionFlowState {
  readonly flow: ResolvedFlowConfig;
  /**
   * Wall-clock ms of this decision on the deciding instance: bucket time and aging. Instances' wall
   * clocks agree up to their skew; a bucket stamped ahead of an instance's clock refills nothing
   * until that clock passes it (`refill` ignores time going back), so skew never adds tokens.
   */
  nowMs = 0;
  globalCost = 0;
  readonly agentCost = new Map<string, number>();
  readonly tenants = new Map<string, TenantUse>();
  /** Work without a tenant, by agent: what keeps an untenanted flow's finish tag. */
  private readonly untenanted = new Map<string, TenantUse>();
  readonly flowQueued = new Map<string, number>();
  readonly heads = new Map<string, FlowHead>();
  private readonly buckets = new Map<string, BucketLevels>();
  private readonly tags = new Map<string, number>();
  private readonly adaptive = new Map<string, AdaptiveState>();
  private readonly dirtyBuckets = new Set<string>();
  private readonly dirtyTags = new Set<string>();
  private readonly dirtyAdaptive = new Set<string>();

  constructor(
    readonly config: ResolvedAdmissionConfig,
    readonly tally: Tally,
  ) {
    this.flow = config.flow;
  }

  /** Reads the state as of `nowMs` (the deciding instance's wall clock). */
  async load(client: TransactionClient, nowMs: number): Promise<void> {
    const row = (await client.query(LOAD_FLOW)).rows[0] as Record<string, never>;
    this.nowMs = nowMs;
    for (const [agentId, tenant, n, cost] of row.held as Array<[string, string | null, number, number]>) this.use(agentId, tenant ?? undefined, n, 0, cost);
    for (const [agentId, tenant, n] of row.queued as Array<[string, string | null, number]>) {
      this.use(agentId, tenant ?? undefined, 0, n, 0);
      this.flowQueued.set(flowKey(agentId, tenant ?? undefined), n);
    }
    for (const head of (row.heads as HeadRow[]).map(headOf)) this.heads.set(flowKey(head.agentId, head.tenant), head);
    for (const [scope, id, requests, cost, at] of row.buckets as Array<[string, string, number, number, number]>) this.buckets.set(`${scope}:${id}`, { requests, cost, at });
    for (const [owner, tag] of row.tags as Array<[string, number]>) this.tags.set(owner, tag);
    for (const [agentId, limit, okCount, lastDecrease] of row.adaptive as Array<[string, number, number, number | null]>) {
      const settings = this.flow.adaptive.get(agentId);
      if (settings === undefined) continue;
      // a row written under other limits is brought back within [min, static]
      const bounded = Math.min(agentLimitOf(this.config, agentId), Math.max(settings.min, limit));
      this.adaptive.set(agentId, { limit: bounded, okCount, lastDecreaseAt: lastDecrease ?? -Infinity });
    }
  }

  /** Adds held (`active`, `cost`) and queued work of (agent, tenant) to the costs and tenant counts. */
  use(agentId: string, tenant: string | undefined, active: number, queued: number, cost: number): void {
    this.globalCost += cost;
    if (cost !== 0) this.agentCost.set(agentId, (this.agentCost.get(agentId) ?? 0) + cost);
    const map = tenant === undefined ? this.untenanted : this.tenants;
    const id = tenant ?? agentId;
    const use = map.get(id) ?? { active: 0, queued: 0, cost: 0 };
    use.active += active;
    use.queued += queued;
    use.cost += cost;
    map.set(id, use);
  }

  /** The adaptive state of an agent listed in `adaptive`, else `undefined`. */
  adaptiveOf(agentId: string): AdaptiveState | undefined {
    if (!this.flow.adaptive.has(agentId)) return undefined;
    let state = this.adaptive.get(agentId);
    if (state === undefined) this.adaptive.set(agentId, (state = initialAdaptiveState(agentLimitOf(this.config, agentId))));
    return state;
  }

  markAdaptive(agentId: string): void {
    this.dirtyAdaptive.add(agentId);
  }

  /** Permits the agent may hold now: its effective limit when adaptive, else its static limit. */
  limitOf(agentId: string): number {
    return this.adaptiveOf(agentId)?.limit ?? agentLimitOf(this.config, agentId);
  }

  /** The scopes of a request in refusal order (agent, tenant, global), buckets refilled lazily by `refusalOf`. */
  scopesOf(agentId: string, tenant: string | undefined): ScopeCheck[] {
    const agent = this.tally.of(agentId);
    const scopes: ScopeCheck[] = [
      [
        { scope: 'agent', limit: this.limitOf(agentId), costLimit: agentCostLimitOf(this.flow, agentId), rate: agentRateOf(this.flow, agentId) },
        { held: agent.active, costHeld: this.agentCost.get(agentId) ?? 0, buckets: this.bucketsOf('agent', agentId, agentRateOf(this.flow, agentId)) },
      ],
    ];
    if (tenant !== undefined) {
      const use = this.tenants.get(tenant);
      const rate = tenantRateOf(this.flow, tenant);
      scopes.push([
        { scope: 'tenant', limit: tenantLimitOf(this.flow, tenant), costLimit: tenantCostLimitOf(this.flow, tenant), rate },
        { held: use?.active ?? 0, costHeld: use?.cost ?? 0, buckets: this.bucketsOf('tenant', tenant, rate) },
      ]);
    }
    scopes.push([
      { scope: 'global', limit: this.config.globalLimit, costLimit: this.flow.globalCostLimit, rate: this.flow.globalRate },
      { held: this.tally.active, costHeld: this.globalCost, buckets: this.bucketsOf('global', '', this.flow.globalRate) },
    ]);
    return scopes;
  }

  /** The buckets of a rated scope instance (full when none is stored), marked for writing back. */
  bucketsOf(scope: LimitScope, id: string, rate: ResolvedRate | undefined): BucketLevels | undefined {
    if (rate === undefined) return undefined;
    const key = `${scope}:${id}`;
    let levels = this.buckets.get(key);
    if (levels === undefined) this.buckets.set(key, (levels = fullBuckets(rate, this.nowMs)));
    this.dirtyBuckets.add(key);
    refill(rate, levels, this.nowMs);
    return levels;
  }

  /** Start and finish tags of a request of (agent, tenant): `S = max(V, F)`, and `F` moves on (spec 09 §3). */
  tag(agentId: string, tenant: string | undefined, cost: number): number {
    const owner = ownerKey(agentId, tenant);
    const start = Math.max(this.tags.get(VIRTUAL_TIME) ?? 0, this.tags.get(owner) ?? -Infinity);
    const weight = tenant === undefined ? 1 : (this.flow.tenantWeights.get(tenant) ?? 1);
    this.tags.set(owner, start + (cost > 0 ? cost : 1) / weight);
    this.dirtyTags.add(owner);
    return start;
  }

  /** A grant sets `V` to its start tag. */
  advance(start: number): void {
    this.tags.set(VIRTUAL_TIME, start);
    this.dirtyTags.add(VIRTUAL_TIME);
  }

  /** Status counts of the tenants with work. */
  tenantCounts(): TenantCounts[] {
    const counts: TenantCounts[] = [];
    for (const [id, use] of this.tenants) {
      if (use.active > 0 || use.queued > 0) counts.push({ id, active: use.active, queued: use.queued, limit: tenantLimitOf(this.flow, id), costInUse: use.cost });
    }
    return counts;
  }

  /** Writes back what changed; drops full buckets and the finish tags of owners without work (spec 09 §3, §7). */
  async save(client: TransactionClient): Promise<void> {
    const write: [string[], string[], number[], number[], number[]] = [[], [], [], [], []];
    const drop: [string[], string[]] = [[], []];
    for (const key of this.dirtyBuckets) {
      const [scope, ...rest] = key.split(':');
      const id = rest.join(':');
      const levels = this.buckets.get(key) as BucketLevels;
      const rate = scope === 'global' ? this.flow.globalRate : scope === 'agent' ? agentRateOf(this.flow, id) : tenantRateOf(this.flow, id);
      const target = rate !== undefined && !isFull(rate, levels, this.nowMs) ? write : drop;
      target[0].push(scope);
      target[1].push(id);
      if (target === write) write[2].push(levels.requests), write[3].push(levels.cost), write[4].push(levels.at);
    }
    if (this.dirtyBuckets.size > 0) await client.query(WRITE_BUCKETS, [...write, ...drop]);
    const owners: string[] = [];
    const values: number[] = [];
    const forget: string[] = [];
    for (const [owner, tag] of this.tags) {
      if (owner !== VIRTUAL_TIME && !this.hasWork(owner)) forget.push(owner);
      else if (this.dirtyTags.has(owner)) owners.push(owner), values.push(tag);
    }
    if (owners.length > 0 || forget.length > 0) await client.query(WRITE_TAGS, [owners, values, forget]);
    if (this.dirtyAdaptive.size === 0) return;
    const agents = [...this.dirtyAdaptive];
    const states = agents.map((id) => this.adaptive.get(id) as AdaptiveState);
    const lastDecrease = states.map((s) => (s.lastDecreaseAt === -Infinity ? null : s.lastDecreaseAt));
    await client.query(WRITE_ADAPTIVE, [agents, states.map((s) => s.limit), states.map((s) => s.okCount), lastDecrease]);
  }

  private hasWork(owner: string): boolean {
    const use = owner.startsWith('tenant:') ? this.tenants.get(owner.slice('tenant:'.length)) : this.untenanted.get(owner.slice('agent:'.length));
    return use !== undefined && (use.active > 0 || use.queued > 0);
  }
}

import { IndexedMinHeap, type HeapItem } from '../../shared/collections/indexed-min-heap';
import { LinkedList } from '../../shared/collections/linked-list';
import { AgentState, type RequestEntry } from '../admission-queue';
import type { AdaptiveState } from './adaptive-limit';
import { compareQueued } from './fair-share';
import type { LimitScope, ResolvedAdaptive } from './flow-config';
import { fullBuckets, type BucketLevels, type ResolvedRate } from './rate-buckets';
import type { ScopeCheck, ScopeLimits, ScopeUsage } from './scope-capacity';

/**
 * One scope instance (the global scope, an agent, a tenant): its limits, what it holds, its rate
 * buckets, and the flows whose head it refused by permits or cost, which go back in the running when
 * it frees (an agent refusing by permits blocks the agent instead, see {@link AgentFlows.blocked}).
 */
export class ScopeState implements ScopeLimits, ScopeUsage {
  held = 0;
  costHeld = 0;
  buckets: BucketLevels | undefined;
  parked: Set<Flow> | undefined = undefined;
  /** This scope as `refusalOf` reads it. */
  readonly check: ScopeCheck;

  constructor(
    readonly scope: LimitScope,
    /** For an adaptive agent its effective limit, updated by reports. */
    public limit: number,
    public costLimit: number,
    public rate: ResolvedRate | undefined,
    now: number,
  ) {
    this.buckets = rate === undefined ? undefined : fullBuckets(rate, now);
    this.check = [this, this];
  }

  park(flow: Flow): void {
    (this.parked ??= new Set()).add(flow);
    flow.parkedOn = this;
  }

  /** Takes the parked flows out (the caller puts them back in the running). */
  unparkAll(): Flow[] {
    const parked = this.parked;
    if (parked === undefined || parked.size === 0) return [];
    this.parked = undefined;
    const flows = [...parked];
    for (const flow of flows) flow.parkedOn = undefined;
    return flows;
  }
}

/**
 * A tenant: its scope, queued count, and finish tag `F` (`undefined` while idle: no credit is banked).
 * A dropped tenant's object may be reused for another tenant ({@link TenantScope.reuse}).
 */
export class TenantScope extends ScopeState {
  queued = 0;
  finish: number | undefined = undefined;

  constructor(
    public id: string,
    public weight: number,
    limit: number,
    costLimit: number,
    rate: ResolvedRate | undefined,
    now: number,
  ) {
    super('tenant', limit, costLimit, rate, now);
  }

  /** Makes this dropped (idle, unreferenced) state the fresh state of `id`, as the constructor would. */
  reuse(id: string, weight: number, limit: number, costLimit: number, rate: ResolvedRate | undefined, now: number): this {
    this.id = id;
    this.weight = weight;
    this.limit = limit;
    this.costLimit = costLimit;
    this.rate = rate;
    this.buckets = rate === undefined ? undefined : fullBuckets(rate, now);
    this.held = 0;
    this.costHeld = 0;
    this.parked = undefined;
    this.queued = 0;
    this.finish = undefined;
    return this;
  }
}

/** Where a flow waits when it is not in its agent's heap. */
export const WAKE = 'wake';

/** Start-tag order of two flow heads (spec 09 §3): effective class desc, then `S`, then sequence. */
export const flowFirst = (a: Flow, b: Flow): boolean => compareQueued(a.rank, a.start, a.seq, b.rank, b.start, b.seq) < 0;

/** The aging record of a flow's head: when its effective class next rises. */
export class AgingNode implements HeapItem {
  heapIndex = -1;
  at = Infinity;
  /** The flow's head sequence when `at` was set (ties of `at` go by it). */
  seq = 0;
  constructor(readonly flow: Flow) {}
}

/**
 * The queued requests of one (agent, tenant) pair, FIFO; requests without a tenant form one flow per
 * agent. The flow competes with its head's key (`rank`, `start`, `seq`), kept here so heaps never
 * read entries.
 */
export class Flow implements HeapItem {
  /** Position in its agent's heap, or in the rate-wake heap. */
  heapIndex = -1;
  readonly queue = new LinkedList<RequestEntry>();
  active = 0;
  /** The untenanted flow's own finish tag (a tenant's flows share the tenant's). */
  finish: number | undefined = undefined;
  rank = 0;
  start = 0;
  seq = 0;
  /** A scope that refused the head, {@link WAKE} while waiting for a rate, else `undefined` (in its agent's heap). */
  parkedOn: ScopeState | typeof WAKE | undefined = undefined;
  wakeAt = Infinity;
  /** Made at the first enqueue: a flow granted at submit never queues. */
  aging: AgingNode | undefined = undefined;
  /** The scopes of its requests in refusal order (agent, tenant, global), as states and as `refusalOf` reads them. */
  readonly states: ScopeState[];
  readonly scopes: ScopeCheck[];

  constructor(
    public agent: AgentFlows,
    public tenant: TenantScope | undefined,
    global: ScopeState,
  ) {
    this.states = tenant ? [agent.scope, tenant, global] : [agent.scope, global];
    this.scopes = this.states.map((scope) => scope.check);
  }

  /** Makes this dropped idle tenanted flow the fresh flow of (`agent`, `tenant`): the global scope stays. */
  reuse(agent: AgentFlows, tenant: TenantScope): this {
    this.agent = agent;
    this.tenant = tenant;
    this.states[0] = agent.scope;
    this.states[1] = tenant;
    this.scopes[0] = agent.scope.check;
    this.scopes[1] = tenant.check;
    this.finish = undefined;
    this.parkedOn = undefined;
    this.wakeAt = Infinity;
    return this;
  }

  get idle(): boolean {
    return this.active === 0 && this.queue.size === 0;
  }
}

/** An agent in flow mode: its scope, its flows by tenant, and a heap of those in the running. */
export class AgentFlows extends AgentState {
  readonly scope: ScopeState;
  readonly flows = new IndexedMinHeap<Flow>(flowFirst);
  readonly byTenant = new Map<string, Flow>();
  queued = 0;
  /** Refused by its permit limit: out of the top heap until a permit of it is released or `L` grows. */
  blocked = false;
  /** The key of its best flow while in the top heap (copied at every re-key, like spec 01's `headSeq`). */
  bestRank = 0;
  bestStart = 0;
  bestSeq = 0;

  constructor(
    id: string,
    staticLimit: number,
    costLimit: number,
    rate: ResolvedRate | undefined,
    readonly adaptive: { readonly settings: ResolvedAdaptive; readonly state: AdaptiveState } | undefined,
    now: number,
  ) {
    super(id, staticLimit);
    this.scope = new ScopeState('agent', adaptive ? adaptive.state.limit : staticLimit, costLimit, rate, now);
  }
}

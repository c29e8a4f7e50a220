import { IndexedMinHeap } from '../../shared/collections/indexed-min-heap';
import { earlierDeadline, type RequestEntry } from '../admission-queue';
import { compareQueued, effectiveRank, nextAgingAt } from './fair-share';
import { AgingNode, flowFirst, WAKE, type AgentFlows, type Flow, type ScopeState } from './flow-state';
import type { Refusal } from './scope-capacity';

const earlierWake = (a: Flow, b: Flow) => a.wakeAt < b.wakeAt || (a.wakeAt === b.wakeAt && a.seq < b.seq);
const agentFirst = (a: AgentFlows, b: AgentFlows): boolean => compareQueued(a.bestRank, a.bestStart, a.bestSeq, b.bestRank, b.bestStart, b.bestSeq) < 0;
const earlierAging = (a: AgingNode, b: AgingNode) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * The queued requests of flow mode (spec 09 §3–§5). Each flow is FIFO; a flow "in the running" sits
 * in its agent's heap keyed by its head, and an unblocked agent sits in the top heap keyed by its best
 * flow, so the next candidate is found in O(1) and moved in O(log n). A flow whose head a scope refused
 * is parked on that scope (permits or cost) or in the wake heap (rate) until the scope frees or the
 * instant comes; an agent refused by its permit limit is blocked as a whole. Heads age through a heap
 * of promotion instants, so no operation scans the flows.
 */
export class FlowQueue {
  /** Keyed by each agent's copy of its best flow's key, so comparisons never leave the agents' records. */
  private readonly top = new IndexedMinHeap<AgentFlows>(agentFirst);
  private readonly wake = new IndexedMinHeap<Flow>(earlierWake);
  private readonly aging = new IndexedMinHeap<AgingNode>(earlierAging);
  private readonly deadlines = new IndexedMinHeap<RequestEntry>(earlierDeadline);
  length = 0;
  /** A flow entered the running (or an agent was unblocked) since the last dispatch looked: a dispatch may grant. */
  dirty = false;

  constructor(
    private readonly global: ScopeState,
    /** `Infinity`: no aging. */
    private readonly agingMs: number,
  ) {}

  /** Appends `entry` to its flow; a flow that was empty enters the running. */
  enqueue(entry: RequestEntry, now: number): void {
    const flow = entry.flow as Flow;
    flow.queue.push(entry);
    this.length++;
    flow.agent.queued++;
    if (flow.tenant) flow.tenant.queued++;
    if (entry.deadline !== Infinity) this.deadlines.push(entry);
    if (flow.queue.size === 1) {
      this.setHead(flow, now);
      this.run(flow);
    }
  }

  /** Takes `entry` out of its flow; a new head puts the flow back in the running (it may fit where the old one did not). */
  remove(entry: RequestEntry, now: number): void {
    const flow = entry.flow as Flow;
    const wasHead = flow.queue.head === entry;
    flow.queue.remove(entry);
    this.length--;
    flow.agent.queued--;
    if (flow.tenant) flow.tenant.queued--;
    if (entry.heapIndex >= 0) this.deadlines.remove(entry);
    if (!wasHead) return;
    if (flow.queue.size === 0) {
      this.leave(flow);
      return;
    }
    if (this.inAgentHeap(flow)) {
      this.setHead(flow, now);
      this.rekey(flow);
    } else {
      this.leave(flow);
      this.setHead(flow, now);
      this.run(flow);
    }
  }

  /** The flow whose head has the smallest key among the flows in the running. */
  best(): Flow | undefined {
    return this.top.peek()?.flows.peek();
  }

  /**
   * Takes `flow` out of the running after its head was refused; `true` when the refusal (the global
   * permit limit) stops every candidate.
   */
  park(flow: Flow, refusal: Refusal, now: number): boolean {
    const agent = flow.agent;
    if (refusal.kind === 'count' && refusal.scope === 'global') return true;
    if (refusal.kind === 'count' && refusal.scope === 'agent') {
      agent.blocked = true;
      this.rekeyAgent(agent);
      return false;
    }
    agent.flows.remove(flow);
    if (refusal.kind === 'rate') {
      flow.parkedOn = WAKE;
      flow.wakeAt = now + refusal.retryAfterMs;
      this.wake.push(flow);
    } else {
      (refusal.scope === 'agent' ? agent.scope : refusal.scope === 'tenant' ? (flow.tenant as ScopeState) : this.global).park(flow);
    }
    this.rekeyAgent(agent);
    return false;
  }

  /** `scope` freed permits or cost: its parked flows are candidates again. */
  unpark(scope: ScopeState): void {
    if (scope.parked === undefined) return;
    for (const flow of scope.unparkAll()) this.run(flow);
  }

  /** An agent below its permit limit again competes. */
  unblock(agent: AgentFlows): void {
    if (!agent.blocked || agent.scope.held >= agent.scope.limit) return;
    agent.blocked = false;
    this.dirty = true;
    this.rekeyAgent(agent);
  }

  /** Flows whose rate instant has come, and heads whose class rose, take their place in the running. */
  catchUp(now: number): void {
    for (let flow = this.wake.peek(); flow && flow.wakeAt <= now; flow = this.wake.peek()) {
      this.wake.remove(flow);
      flow.wakeAt = Infinity;
      this.run(flow);
    }
    for (let node = this.aging.peek(); node && node.at <= now; node = this.aging.peek()) {
      const flow = node.flow;
      this.setHead(flow, now, true);
      if (this.inAgentHeap(flow)) this.rekey(flow);
    }
  }

  /** The earliest instant a rate-parked flow may fit; `Infinity` for none. */
  nextWakeAt(): number {
    return this.wake.peek()?.wakeAt ?? Infinity;
  }

  earliestDeadline(): RequestEntry | undefined {
    return this.deadlines.peek();
  }

  private inAgentHeap(flow: Flow): boolean {
    return flow.parkedOn === undefined && flow.heapIndex >= 0;
  }

  /** Whether a dispatch may grant now: flows entered the running, or a rate instant or an aging step came. */
  due(now: number): boolean {
    return this.dirty || this.nextWakeAt() <= now || (this.aging.peek()?.at ?? Infinity) <= now;
  }

  private run(flow: Flow): void {
    this.dirty = true;
    flow.parkedOn = undefined;
    flow.agent.flows.push(flow);
    this.rekeyAgent(flow.agent);
  }

  private rekey(flow: Flow): void {
    flow.agent.flows.update(flow);
    this.rekeyAgent(flow.agent);
  }

  /** Out of every structure (its last request left). */
  private leave(flow: Flow): void {
    const where = flow.parkedOn;
    if (where === undefined) {
      if (flow.heapIndex >= 0) {
        flow.agent.flows.remove(flow);
        this.rekeyAgent(flow.agent);
      }
    } else if (where === WAKE) {
      this.wake.remove(flow);
      flow.wakeAt = Infinity;
    } else {
      where.parked?.delete(flow);
    }
    flow.parkedOn = undefined;
    if (flow.aging !== undefined && flow.aging.heapIndex >= 0) this.aging.remove(flow.aging);
  }

  private rekeyAgent(agent: AgentFlows): void {
    const competes = agent.flows.size > 0 && !agent.blocked;
    if (competes) {
      const best = agent.flows.peek() as Flow;
      agent.bestRank = best.rank;
      agent.bestStart = best.start;
      agent.bestSeq = best.seq;
      if (agent.heapIndex >= 0) this.top.update(agent);
      else this.top.push(agent);
    } else if (agent.heapIndex >= 0) {
      this.top.remove(agent);
    }
  }

  /**
   * The flow's key from its head, and the head's next promotion instant. An aging record already due
   * no later than that instant is left as it is unless `exact` (at its instant {@link catchUp} computes
   * the key again): a new head is younger than the old one, so most head changes move no record.
   */
  private setHead(flow: Flow, now: number, exact = false): void {
    const head = flow.queue.head as RequestEntry;
    flow.seq = head.seq;
    flow.start = head.start;
    flow.rank = effectiveRank(head.rank, now - head.submittedAt, this.agingMs);
    const at = nextAgingAt(head.rank, head.submittedAt, now, this.agingMs);
    if (at === Infinity && flow.aging === undefined) return;
    const node = (flow.aging ??= new AgingNode(flow));
    if (!exact && node.heapIndex >= 0 && node.at <= at) return;
    node.at = at;
    node.seq = flow.seq;
    if (at === Infinity) {
      if (node.heapIndex >= 0) this.aging.remove(node);
    } else if (node.heapIndex >= 0) this.aging.update(node);
    else this.aging.push(node);
  }
}

import { IndexedMinHeap, type HeapItem } from '../shared/collections/indexed-min-heap';
import { LinkedList, type ListNode } from '../shared/collections/linked-list';
import { TrackedRequest } from './requests/tracked-request';
import type { Flow } from './flow/flow-state';

/** Per-agent bookkeeping; dropped when the agent has neither active nor queued work. */
export class AgentState implements HeapItem {
  active = 0;
  readonly queue = new LinkedList<RequestEntry>();
  heapIndex = -1;
  /** Sequence number of the queue's head while in the eligible heap (kept here so the heap never touches entries). */
  headSeq = 0;

  constructor(
    readonly id: string,
    readonly limit: number,
  ) {}
}

/** A request of the local controller: its agent's record and its place in that agent's FIFO. */
export class RequestEntry extends TrackedRequest implements ListNode<RequestEntry> {
  prev: RequestEntry | null = null;
  next: RequestEntry | null = null;
  /** Flow mode (spec 09): the request's flow, its start tag, and whether its agent was saturated at its grant. */
  flow: Flow | undefined = undefined;
  start = 0;
  saturated = false;

  constructor(
    issuer: object,
    ref: string,
    readonly agent: AgentState,
    /** The controller's submit sequence: FIFO order within an agent, age across agents. */
    seq: number,
    deadline: number,
    submittedAt: number,
    owner: AbortSignal | undefined,
    signal: AbortSignal | undefined,
  ) {
    super(issuer, ref, agent.id, deadline, submittedAt, owner, signal);
    this.seq = seq;
  }
}

const olderHead = (a: AgentState, b: AgentState) => a.headSeq < b.headSeq;
/** Deadline order of queued requests (then submit order), the one of both the spec-01 and the flow queue. */
export const earlierDeadline = (a: RequestEntry, b: RequestEntry): boolean =>
  a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq);

/**
 * The queued requests: a FIFO per agent, a heap of the agents that have queued work and spare
 * capacity keyed by the sequence number of their head ("eligible heads"), and a heap of finite
 * deadlines. Dispatch and expiry are O(log A) and O(log n) per request, never a scan.
 */
export class AdmissionQueue {
  private readonly eligible = new IndexedMinHeap<AgentState>(olderHead);
  private readonly deadlines = new IndexedMinHeap<RequestEntry>(earlierDeadline);
  length = 0;

  enqueue(entry: RequestEntry): void {
    const agent = entry.agent;
    agent.queue.push(entry);
    this.length++;
    if (entry.deadline !== Infinity) this.deadlines.push(entry);
    if (agent.queue.size === 1) this.refresh(agent);
  }

  remove(entry: RequestEntry): void {
    const agent = entry.agent;
    const wasHead = agent.queue.head === entry;
    agent.queue.remove(entry);
    this.length--;
    if (entry.heapIndex >= 0) this.deadlines.remove(entry);
    if (wasHead) this.refresh(agent);
  }

  /** Re-evaluates whether `agent` is eligible (queued work and spare capacity) and re-keys it. */
  refresh(agent: AgentState): void {
    const eligible = agent.queue.size > 0 && agent.active < agent.limit;
    const inHeap = agent.heapIndex >= 0;
    if (eligible) {
      agent.headSeq = (agent.queue.head as RequestEntry).seq;
      if (inHeap) this.eligible.update(agent);
      else this.eligible.push(agent);
    } else if (inHeap) {
      this.eligible.remove(agent);
    }
  }

  /** The oldest queued request whose agent has capacity. */
  oldestEligible(): RequestEntry | undefined {
    return this.eligible.peek()?.queue.head ?? undefined;
  }

  /** The queued request with the earliest finite deadline. */
  earliestDeadline(): RequestEntry | undefined {
    return this.deadlines.peek();
  }
}

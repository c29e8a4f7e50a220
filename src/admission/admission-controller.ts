import { rejectedWith } from '../shared/async/handled-promise';
import { agentLimitOf, type AdmissionConfig } from './admission-config';
import { AdmissionQueue, AgentState, RequestEntry } from './admission-queue';
import type { AdmissionRequestOptions } from './admission-request';
import type { AdmissionStatus, SubmitResult } from './admission.types';
import { AdmissionError } from './admission.errors';
import type { Permit } from './permit';
import { AdmissionOperations } from './requests/admission-operations';
import type { AdmissionControllerDeps } from './requests/admission-lifecycle';
import { newPermitId, newRequestRef } from './requests/admission-ids';
import type { ParsedRequest } from './admission-request';
import type { WorkReport } from './permit';
import { FlowScheduler } from './flow/flow-scheduler';
import type { Flow } from './flow/flow-state';
import { oversizeScope, type Refusal } from './flow/scope-capacity';
import { DeadlineTimer } from '../shared/time/deadline-timer';

export type { AdmissionControllerDeps };

/**
 * Bounds concurrent agent work globally and per agent (spec 01). A caller gets a permit at once,
 * waits in a bounded FIFO queue until an absolute deadline, or is refused with a typed code.
 * Capacity comes back exactly once: on release, cancel, or abort of the owner's signal.
 *
 * The operations on requests (`await`, `cancel`, `release`, `run`, `status`, drain) are those of
 * every controller ({@link AdmissionOperations}); this one decides grants in memory: `submit` and the
 * dispatch over {@link AdmissionQueue}. With a flow-control option (spec 09: tenants, costs, rates,
 * adaptive limits, priorities) it decides over three scopes with a {@link FlowScheduler} instead:
 * flows per (agent, tenant), start-time fair queueing with aging, and one timer for rate waits.
 *
 * @example
 * const admission = new AdmissionController({ globalLimit: 256, overflow: 'queue' });
 * const answer = await admission.run('support-agent', (permit, signal) => callModel(signal));
 */
export class AdmissionController extends AdmissionOperations<RequestEntry, AdmissionStatus> {
  protected active = 0;
  private readonly agents = new Map<string, AgentState>();
  private readonly queue = new AdmissionQueue();
  private sequence = 0;
  /** Spec 09 state, only when a flow-control option is configured (otherwise spec 01's path runs as it always did). */
  private readonly flows: FlowScheduler | undefined;
  /** Armed for the earliest instant a rate-parked flow may fit. */
  private readonly rateTimer: DeadlineTimer | undefined;

  constructor(config?: AdmissionConfig, deps: AdmissionControllerDeps = {}) {
    super(config, deps);
    if (this.config.flowControl) {
      this.flows = new FlowScheduler(this.config, this.now());
      this.rateTimer = new DeadlineTimer(this.clock, () => this.operate(() => this.dispatch(this.now())));
    }
  }

  /**
   * Asks for capacity without waiting: a permit now, a place in the queue, or a thrown
   * {@link AdmissionError} (`deployment_draining`, `invalid_admission_options`,
   * `concurrency_limit_reached`, `admission_queue_full`, `queue_deadline_exceeded`, `owner_down`).
   */
  submit(agentId: string, opts?: AdmissionRequestOptions): SubmitResult {
    return this.operate(() => this.submitEntry(agentId, opts).submitResult());
  }

  /** `submit`, then waits for a queued request's outcome. Never throws synchronously. */
  acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit> {
    return this.operate(() => {
      try {
        const entry = this.submitEntry(agentId, opts);
        return entry.state === 'active' ? Promise.resolve(entry.permit as Permit) : entry.wait();
      } catch (error) {
        return rejectedWith<Permit>(error);
      }
    });
  }

  // ---- grants in memory (spec 01 §5.1 steps 4–7, §5.2) --------------------------------------

  private submitEntry(agentId: string, opts: AdmissionRequestOptions | undefined): RequestEntry {
    const now = this.now();
    const request = this.admit(agentId, opts, now);
    if (this.flows) return this.submitFlow(this.flows, agentId, request, now);
    this.purge(now);
    const agent = this.agents.get(agentId) ?? new AgentState(agentId, agentLimitOf(this.config, agentId));
    if (this.active < this.config.globalLimit && agent.active < agent.limit) {
      const entry = this.newEntry(agent, request.deadline, now, request.owner, undefined);
      this.grant(entry, now);
      return entry;
    }
    if (request.overflow === 'reject') {
      this.decide('rejected', agentId, 0);
      throw new AdmissionError('concurrency_limit_reached', { limit_scope: agent.active >= agent.limit ? 'agent' : 'global' });
    }
    if (this.queue.length >= this.config.maxQueue) {
      this.decide('queue_full', agentId, 0);
      throw new AdmissionError('admission_queue_full', { max_queue: this.config.maxQueue });
    }
    if (request.deadline <= now) {
      this.decide('expired', agentId, 0);
      throw new AdmissionError('queue_deadline_exceeded');
    }
    const entry = this.newEntry(agent, request.deadline, now, request.owner, request.signal);
    this.queue.enqueue(entry);
    this.watch(entry);
    this.decide('queued', agentId, 0);
    return entry;
  }

  private newEntry(agent: AgentState, deadline: number, now: number, owner: AbortSignal | undefined, signal: AbortSignal | undefined): RequestEntry {
    if (agent.active === 0 && agent.queue.size === 0) this.agents.set(agent.id, agent);
    const entry = new RequestEntry(this, newRequestRef(), agent, this.sequence++, deadline, now, owner, signal);
    this.track(entry);
    return entry;
  }

  // ---- grants in flow mode (spec 09) -----------------------------------------------------------

  private submitFlow(flows: FlowScheduler, agentId: string, request: ParsedRequest, now: number): RequestEntry {
    this.purge(now);
    // queued work that may fit goes before this request
    if (flows.queue.due(now)) this.dispatch(now);
    const flow = flows.flowOf(agentId, request.tenant, now);
    const oversize = oversizeScope(flow.scopes, request.cost);
    if (oversize !== undefined) this.refuse(flow, request, { kind: 'cost', scope: oversize }, now);
    const refusal = flows.refusalAtSubmit(flow, request.cost, now);
    if (refusal === undefined) {
      const entry = this.newFlowEntry(flow, request, now, undefined);
      this.grant(entry, now);
      return entry;
    }
    if (request.overflow === 'reject') this.refuse(flow, request, refusal, now);
    if (this.queued >= this.config.maxQueue) {
      flows.forget(flow, now);
      this.decide('queue_full', agentId, 0, request.tenant);
      throw new AdmissionError('admission_queue_full', { max_queue: this.config.maxQueue });
    }
    if (request.deadline <= now) {
      flows.forget(flow, now);
      this.decide('expired', agentId, 0, request.tenant);
      throw new AdmissionError('queue_deadline_exceeded');
    }
    const entry = this.newFlowEntry(flow, request, now, request.signal);
    flows.queue.enqueue(entry, now);
    if (flow.queue.size === 1) flows.queue.park(flow, refusal, now);
    this.watch(entry);
    this.decide('queued', agentId, 0, request.tenant);
    return entry;
  }

  /** Spec 09 §2, §5, §8: `concurrency_limit_reached {limit_scope[, limit_kind: 'cost']}` or `rate_limited {limit_scope, retry_after_ms}`. */
  private refuse(flow: Flow, request: ParsedRequest, refusal: Refusal, now: number): never {
    (this.flows as FlowScheduler).forget(flow, now);
    const agentId = flow.agent.id;
    if (refusal.kind === 'rate') {
      this.decide('rate_limited', agentId, 0, request.tenant);
      throw new AdmissionError('rate_limited', { limit_scope: refusal.scope, retry_after_ms: refusal.retryAfterMs });
    }
    this.decide('rejected', agentId, 0, request.tenant);
    throw new AdmissionError('concurrency_limit_reached', refusal.kind === 'cost' ? { limit_scope: refusal.scope, limit_kind: 'cost' } : { limit_scope: refusal.scope });
  }

  private newFlowEntry(flow: Flow, request: ParsedRequest, now: number, signal: AbortSignal | undefined): RequestEntry {
    const entry = new RequestEntry(this, newRequestRef(), flow.agent, this.sequence++, request.deadline, now, request.owner, signal);
    entry.flow = flow;
    entry.tenant = request.tenant;
    entry.cost = request.cost;
    entry.rank = request.rank;
    (this.flows as FlowScheduler).tag(entry);
    this.track(entry);
    return entry;
  }

  protected override settled(entry: RequestEntry, actualCost: number, now: number): void {
    this.flows?.settle(entry, actualCost, now);
  }

  protected override reported(entry: RequestEntry, report: WorkReport, now: number): void {
    if (this.flows?.report(entry, report, now)) this.dispatch(now);
  }

  protected override operate<T>(operation: () => T): T {
    try {
      return super.operate(operation);
    } finally {
      if (this.flows) (this.rateTimer as DeadlineTimer).arm(this.flows.queue.nextWakeAt());
    }
  }

  // ---- dispatch -----------------------------------------------------------------------------

  /** Grants the queued requests that fit, best first (spec 01 §5.2; in flow mode spec 09 §3's key). */
  protected override dispatch(now: number): void {
    this.purge(now);
    const flows = this.flows;
    if (flows) {
      for (let entry = flows.next(now); entry; entry = flows.next(now)) {
        flows.queue.remove(entry, now);
        this.grant(entry, now);
      }
      return;
    }
    while (this.active < this.config.globalLimit) {
      const entry = this.queue.oldestEligible();
      if (entry === undefined) return;
      this.queue.remove(entry);
      this.grant(entry, now);
    }
  }

  private grant(entry: RequestEntry, now: number): void {
    this.activate(entry, newPermitId(), now - entry.submittedAt);
  }

  // ---- counts -----------------------------------------------------------------------------

  protected get queued(): number {
    return this.flows ? this.flows.queue.length : this.queue.length;
  }

  protected permitsHeld(): number {
    return this.active;
  }

  protected earliestDeadline(): RequestEntry | undefined {
    return this.flows ? this.flows.queue.earliestDeadline() : this.queue.earliestDeadline();
  }

  protected granted(entry: RequestEntry): void {
    if (this.flows) {
      this.active++;
      this.flows.take(entry);
      return;
    }
    const agent = entry.agent;
    agent.active++;
    this.active++;
    if (agent.queue.size > 0 && agent.active === agent.limit) this.queue.refresh(agent);
  }

  protected revoked(entry: RequestEntry): void {
    if (this.flows) {
      this.active--;
      this.flows.give(entry, this.now());
      return;
    }
    const agent = entry.agent;
    agent.active--;
    this.active--;
    if (agent.queue.size > 0 && agent.active === agent.limit - 1) this.queue.refresh(agent);
    this.forgetIfIdle(agent);
  }

  protected dequeued(entry: RequestEntry): void {
    if (this.flows) {
      const now = this.now();
      this.flows.queue.remove(entry, now);
      this.flows.forget(entry.flow as Flow, now);
      return;
    }
    this.queue.remove(entry);
    this.forgetIfIdle(entry.agent);
  }

  protected snapshot(): AdmissionStatus {
    const flows = this.flows;
    if (flows) return this.statusRecord(flows.agentCounts(), flows.tenantCounts(), flows.global.costHeld);
    return this.statusRecord([...this.agents.values()].map((agent) => ({ id: agent.id, active: agent.active, queued: agent.queue.size, limit: agent.limit })));
  }

  private forgetIfIdle(agent: AgentState): void {
    if (agent.active === 0 && agent.queue.size === 0) this.agents.delete(agent.id);
  }
}

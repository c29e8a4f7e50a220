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

export type { AdmissionControllerDeps };

/**
 * Bounds concurrent agent work globally and per agent (spec 01). A caller gets a permit at once,
 * waits in a bounded FIFO queue until an absolute deadline, or is refused with a typed code.
 * Capacity comes back exactly once: on release, cancel, or abort of the owner's signal.
 *
 * The operations on requests (`await`, `cancel`, `release`, `run`, `status`, drain) are those of
 * every controller ({@link AdmissionOperations}); this one decides grants in memory: `submit` and the
 * dispatch over {@link AdmissionQueue}.
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

  constructor(config?: AdmissionConfig, deps: AdmissionControllerDeps = {}) {
    super(config, deps);
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

  /** Grants the oldest eligible requests while global capacity lasts. */
  protected override dispatch(now: number): void {
    this.purge(now);
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
    return this.queue.length;
  }

  protected permitsHeld(): number {
    return this.active;
  }

  protected earliestDeadline(): RequestEntry | undefined {
    return this.queue.earliestDeadline();
  }

  protected granted(entry: RequestEntry): void {
    const agent = entry.agent;
    agent.active++;
    this.active++;
    if (agent.queue.size > 0 && agent.active === agent.limit) this.queue.refresh(agent);
  }

  protected revoked(entry: RequestEntry): void {
    const agent = entry.agent;
    agent.active--;
    this.active--;
    if (agent.queue.size > 0 && agent.active === agent.limit - 1) this.queue.refresh(agent);
    this.forgetIfIdle(agent);
  }

  protected dequeued(entry: RequestEntry): void {
    this.queue.remove(entry);
    this.forgetIfIdle(entry.agent);
  }

  protected snapshot(): AdmissionStatus {
    return this.statusRecord([...this.agents.values()].map((agent) => ({ id: agent.id, active: agent.active, queued: agent.queue.size, limit: agent.limit })));
  }

  private forgetIfIdle(agent: AgentState): void {
    if (agent.active === 0 && agent.queue.size === 0) this.agents.delete(agent.id);
  }
}

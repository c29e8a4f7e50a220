import { agentLimitOf, type AdmissionConfig } from '../admission-config';
import type { AdmissionRequestOptions } from '../admission-request';
import type { SubmitResult } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import type { Permit } from '../permit';
import { AdmissionOperations } from '../requests/admission-operations';
import type { AdmissionControllerDeps } from '../requests/admission-lifecycle';
import type { RequestState } from '../requests/tracked-request';
import { handled, thenOrRejected } from '../../shared/async/handled-promise';
import { IndexedMinHeap } from '../../shared/collections/indexed-min-heap';
import { refusalOf, type DecisionOutcome, type SubmitDecision } from './admission-decisions';
import { AdmissionLockWatch } from './admission-lock-watch';
import { ClusterAdmissionLink } from './cluster-admission-link';
import { resolveClusterAdmissionOptions, type ClusterAdmissionOptions } from './cluster-admission-options';
import type { ClusterAdmissionStatus } from './cluster-admission.types';
import { ClusterRequest, earlierDeadline } from './cluster-request';
import { ClusterView, type Removal } from './cluster-view';
import { InstanceDecisions, type DecisionPlan } from './instance-decisions';
import { newPermitId, newRequestRef } from '../requests/admission-ids';
import type { WorkReport } from '../permit';

/** Collaborators of a {@link ClusterAdmissionController}: those of every admission controller. */
export type ClusterAdmissionControllerDeps = AdmissionControllerDeps;

/**
 * Admission across every instance of a cluster (spec 08 §3) with the API, options, codes and records
 * of `AdmissionController` (spec 01). Each decision is one Postgres transaction under one advisory
 * lock, counted over all live instances; grants reach the requesting instance by NOTIFY (or the
 * periodic poll). It fails closed: without the database nothing is admitted.
 *
 * This instance's own requests are known locally, so `cancel`, `release`, `await`, `status` and the
 * deadline timer answer synchronously (they are those of every controller, {@link AdmissionOperations});
 * their database deletes run in the background and are retried until they land (or the instance dies,
 * when the reap returns the capacity).
 *
 * @example
 * const admission = new ClusterAdmissionController({ globalLimit: 64, overflow: 'queue' }, { instance }); // a started ClusterInstance
 * await admission.start();
 * const answer = await admission.run('support-agent', (permit, signal) => callModel(signal));
 */
export class ClusterAdmissionController extends AdmissionOperations<ClusterRequest, ClusterAdmissionStatus> {
  private readonly instanceId: string;
  private readonly link: ClusterAdmissionLink;
  private readonly decisions: InstanceDecisions;
  private readonly deadlines = new IndexedMinHeap<ClusterRequest>(earlierDeadline);
  private readonly view = new ClusterView();
  private readonly instance: ClusterAdmissionOptions['instance'];
  private readonly lock: AdmissionLockWatch;
  private localActive = 0;
  private localQueued = 0;
  private pending = 0;

  constructor(config: AdmissionConfig | undefined, cluster: ClusterAdmissionOptions, deps: ClusterAdmissionControllerDeps = {}) {
    super(config, deps);
    const options = resolveClusterAdmissionOptions(cluster);
    this.instanceId = options.instance.instanceId;
    this.link = new ClusterAdmissionLink(options.instance, options, this.config, this.clock, {
      decide: (plan) => this.decideNow(plan),
      waiting: () => [...this.requests.values()].filter((entry) => entry.state === 'queued' || entry.state === 'pending').map((entry) => entry.ref),
      granted: (refs) => this.operate(() => refs.forEach((ref) => this.grantArrived(ref))),
    });
    this.decisions = new InstanceDecisions(options.instance, this.link, this.config, this.clock, () => this.decideNow({}), this.view);
    this.instance = options.instance;
    this.lock = new AdmissionLockWatch(options.instance, (event) => this.lockChanged(event), () => this.link.stopped);
  }

  /** The cluster-wide status; a lapse of the instance lock that its timer has not reported yet is acted on first. */
  override status(): ClusterAdmissionStatus {
    this.lock.check();
    return super.status();
  }

  /** True while started, the LISTEN connection is up and the instance holds its lock (readiness). */
  get connected(): boolean {
    return this.link.connected;
  }

  /**
   * Validates the admission tables (`ClusterError('schema_mismatch')`), agrees on the limits with the
   * cluster (`cluster_config_mismatch`), LISTENs for grants and starts the periodic reap and poll.
   * The instance must have been started. Idempotent; a failed start may be retried.
   */
  start(): Promise<void> {
    return this.link.start();
  }

  /**
   * Leaves the cluster: stops the poll and the listener, fails what is still queued here with
   * `deployment_draining`, revokes what is still held here (`owner_down`), and deletes this
   * instance's remaining rows (best effort; the reap returns them otherwise). Call it after `drain`.
   */
  async stop(): Promise<void> {
    if (this.link.stopped) return;
    const wasStarted = await this.link.halt();
    this.operate(() => {
      this.stopAdmitting();
      for (const entry of [...this.requests.values()]) this.revoke(entry, 'owner_down');
    });
    this.expiryTimer.clear();
    this.lock.close();
    await this.link.close();
    if (wasStarted) await this.decisions.leave();
  }

  /**
   * Asks the cluster for capacity: a permit now, a place in the queue, or a rejection with an
   * {@link AdmissionError} (spec 01 §5.1 codes, or `admission_store_unavailable`). Steps 1–3 (draining,
   * validation, aborted signals) are decided before any database work.
   */
  submit(agentId: string, opts?: AdmissionRequestOptions): Promise<SubmitResult> {
    return thenOrRejected(() => this.operate(() => this.admitHere(agentId, opts)), (entry) => handled(this.decideSubmit(entry)));
  }

  /** `submit`, then waits for a queued request's outcome. Never throws synchronously. */
  acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit> {
    return thenOrRejected(() => this.operate(() => this.admitHere(agentId, opts)), (entry) => {
      const permit = entry.wait();
      this.decideSubmit(entry).catch(() => undefined);
      return permit;
    });
  }

  // ---- decisions ---------------------------------------------------------------------------

  /** Spec 01 §5.1 steps 1–3 here (a refusal rejects, it is never thrown): a `pending` request of this instance, whose submit the cluster decides. */
  private admitHere(agentId: string, opts: AdmissionRequestOptions | undefined): ClusterRequest {
    const now = this.now();
    const request = this.admit(agentId, opts, now);
    if (!this.link.admitting) throw new AdmissionError('admission_store_unavailable');
    this.purge(now);
    const entry = new ClusterRequest(this, newRequestRef(), newPermitId(), agentId, request, now);
    this.track(entry);
    this.pending++;
    this.watch(entry);
    return entry;
  }

  /**
   * One decision carrying the pending deletes and looking up this instance's waiting requests (on a
   * poll, its permits too) as they are when its turn comes; its outcome and `after` are applied in one operation.
   */
  private decideNow<T>(plan: DecisionPlan<ClusterRequest>, after?: (outcome: DecisionOutcome) => T): Promise<T | undefined> {
    let lookedUp: Array<readonly [ClusterRequest, RequestState]> = [];
    const lookUp = () => {
      lookedUp = [...this.requests.values()].filter((entry) => entry.state !== 'active' || plan.poll === true).map((entry) => [entry, entry.state] as const);
      return lookedUp.filter(([entry]) => entry !== plan.submit).map(([entry]) => entry.ref);
    };
    return this.decisions.decide(plan, lookUp, (outcome) =>
      this.operate(() => {
        this.applyDecision(outcome, lookedUp, plan.submit);
        return after?.(outcome);
      }),
    );
  }

  private applyDecision(outcome: DecisionOutcome, lookedUp: ReadonlyArray<readonly [ClusterRequest, RequestState]>, submit: ClusterRequest | undefined): void {
    this.view.readDecision(outcome, this.instanceId, this.decisions.removedSince(), (grant) => this.grantArrived(grant.requestId, grant.saturated));
    this.decisions.wakeAfter(outcome.flow?.wakeAfterMs ?? Infinity);
    for (const [entry, state] of lookedUp) {
      // a request that moved on while the decision ran is judged by its newer state
      if (entry === submit || entry.state !== state) continue;
      const held = outcome.held.has(entry.ref);
      if (entry.state === 'pending') entry.grantedEarly ||= held;
      else if (entry.state === 'queued' && held) this.grantQueued(entry);
      // its row is gone although nobody here removed it: the cluster took this instance for dead and reaped it
      else if (entry.state === 'queued' && !outcome.waiting.has(entry.ref)) this.removeQueued(entry, new AdmissionError('admission_store_unavailable'), 'owner_down', this.now());
      else if (entry.state === 'active' && !held) this.revoke(entry, 'owner_down');
    }
  }

  private async decideSubmit(entry: ClusterRequest): Promise<SubmitResult> {
    try {
      return (await this.decideNow({ submit: entry }, (outcome) => this.applySubmit(entry, outcome.submit as SubmitDecision))) as SubmitResult;
    } catch (error) {
      if (entry.state === 'pending') this.operate(() => this.failPending(entry, error));
      throw error;
    }
  }

  private applySubmit(entry: ClusterRequest, decision: SubmitDecision): SubmitResult {
    this.pending--;
    const now = this.now();
    if (decision.kind === 'granted') {
      entry.saturated = decision.saturated;
      this.activate(entry, entry.permitId, 0);
      const result = entry.submitResult();
      if (entry.owner?.aborted || this.link.stopped || this.lock.lapsed) this.revoke(entry, 'owner_down');
      this.notifyIfDrained();
      return result;
    }
    if (decision.kind === 'queued') {
      entry.state = 'queued';
      entry.seq = decision.seq;
      this.localQueued++;
      if (entry.deadline !== Infinity) this.deadlines.push(entry);
      this.decide('queued', entry.agentId, 0, entry.tenant);
      const result = entry.submitResult();
      // what happened here while the decision ran: an abort, a drain, a grant, the deadline
      if (entry.owner?.aborted || entry.signal?.aborted) this.abortQueued(entry, now);
      else if (this.draining) this.removeQueued(entry, new AdmissionError('deployment_draining'), 'deployment_draining', now);
      else if (!this.instance.live) this.removeQueued(entry, new AdmissionError('admission_store_unavailable'), 'owner_down', now);
      else if (entry.grantedEarly) this.grantQueued(entry);
      else this.purge(now);
      this.notifyIfDrained();
      return result;
    }
    const [error, outcome] = refusalOf(decision, this.config.maxQueue);
    this.finish(entry, error);
    this.decide(outcome, entry.agentId, 0, entry.tenant);
    this.notifyIfDrained();
    throw error;
  }

  /** The submit decision failed: nothing of it was committed, unless the failure hid a commit, hence the delete. */
  private failPending(entry: ClusterRequest, error: unknown): void {
    this.pending--;
    this.finish(entry, error);
    this.decisions.retire(entry.ref);
    this.notifyIfDrained();
  }

  private grantArrived(ref: string, saturated?: boolean): void {
    const entry = this.requests.get(ref);
    if (entry !== undefined) entry.saturated ??= saturated;
    if (entry?.state === 'queued') this.grantQueued(entry);
    else if (entry?.state === 'pending') entry.grantedEarly = true;
    // the waiter went before the grant arrived: give the permit back
    else if (entry === undefined) this.decisions.retire(ref);
  }

  /** The instance lock was lost (queued requests fail) or lapsed (permits are revoked too): see {@link AdmissionLockWatch}. */
  private lockChanged(event: 'lost' | 'lapsed'): void {
    this.operate(() => {
      for (const entry of [...this.requests.values()]) {
        if (entry.state === 'queued') this.removeQueued(entry, new AdmissionError('admission_store_unavailable'), 'owner_down', this.now());
        else if (event === 'lapsed') this.revoke(entry, 'owner_down');
      }
    });
  }

  private grantQueued(entry: ClusterRequest): void {
    this.leaveQueue(entry);
    this.activate(entry, entry.permitId, this.now() - entry.submittedAt);
  }

  // ---- counts: the cluster's as last read, this instance's exactly ------------------------------

  protected get active(): number {
    return this.view.active;
  }

  protected get queued(): number {
    return this.view.queued;
  }

  protected permitsHeld(): number {
    return this.localActive;
  }

  protected override isDrained(): boolean {
    return this.localActive === 0 && this.pending === 0;
  }

  protected earliestDeadline(): ClusterRequest | undefined {
    return this.deadlines.peek();
  }

  protected granted(): void {
    this.localActive++;
  }

  protected revoked(entry: ClusterRequest): void {
    this.localActive--;
    this.removeRow(entry, 'active');
  }

  protected dequeued(entry: ClusterRequest): void {
    this.leaveQueue(entry);
    this.removeRow(entry, 'queued');
  }

  private leaveQueue(entry: ClusterRequest): void {
    if (entry.heapIndex >= 0) this.deadlines.remove(entry);
    this.localQueued--;
  }

  /** Counts the removal in the view at once, and deletes the row in the background. */
  private removeRow(entry: ClusterRequest, what: Removal['what']): void {
    this.decisions.retire(entry.ref, this.view.lower({ agentId: entry.agentId, what, tenant: entry.tenant, cost: what === 'active' ? entry.cost : 0 }));
  }

  /** Spec 09 §9: a settle or report is carried by this instance's next decision. */
  protected override settled = (entry: ClusterRequest, actual: number): void => this.decisions.settled(entry, actual);
  protected override reported = (entry: ClusterRequest, report: WorkReport): void => this.decisions.reported(entry, report);

  protected snapshot(): ClusterAdmissionStatus {
    const record = this.statusRecord(this.view.perAgent((id) => agentLimitOf(this.config, id)), this.view.tenants(), this.view.costInUse);
    return Object.freeze({ ...record, instances_live: this.view.instancesLive, instance: Object.freeze({ active: this.localActive, queued: this.localQueued }) });
  }
}

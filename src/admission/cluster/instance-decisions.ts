import type { ResolvedAdmissionConfig } from '../admission-config';
import { CoalescedTask } from '../../shared/async/coalesced-task';
import type { Clock } from '../../shared/time/clock';
import { exponentialBackoff, retry } from '../../shared/time/retry';
import type { ClusterInstance } from '../../cluster/cluster-instance';
import { runDecision, type DecisionOutcome, type ReportRecord, type SettleRecord, type SubmitPlan } from './admission-decisions';
import type { ClusterAdmissionLink } from './cluster-admission-link';
import type { ClusterView, Removal } from './cluster-view';
import { agentLimitOf } from '../admission-config';
import { applyReport, initialAdaptiveState } from '../flow/adaptive-limit';
import type { ClusterRequest } from './cluster-request';
import type { WorkReport } from '../permit';
import { DeadlineTimer } from '../../shared/time/deadline-timer';

/** What one decision of this instance does besides its pending deletes. */
export interface DecisionPlan<Submit extends SubmitPlan = SubmitPlan> {
  /** The new request to decide. */
  readonly submit?: Submit;
  /** Also check this instance's permits. */
  readonly poll?: boolean;
  /** Delete every row of this instance id. */
  readonly retireAll?: boolean;
}

/** Pause before the n-th retry of a background delete (release, cancel, abort, expiry). */
const RETIRE_BACKOFF = exponentialBackoff(50, 2000);

/**
 * This instance's decisions (spec 08 §3), one after another in call order, so its queue keeps the
 * order of its submits. Each carries the deletes of the rows its ended requests left (queued or
 * granted); while some wait, decisions are retried with backoff until they land or the link stops.
 */
export class InstanceDecisions {
  private chain: Promise<unknown> = Promise.resolve();
  /** Refs of this instance's requests whose rows must go, with what the view already lost for them. */
  private readonly retiring = new Map<string, Removal | null>();
  private readonly retirer = new CoalescedTask(() => this.retireAll(), (run) => void this.link.track(run));
  /** Settles and reports of this instance's permits not yet carried by a decision (spec 09 §9). */
  private settles: SettleRecord[] = [];
  private reports: ReportRecord[] = [];
  private readonly recorder = new CoalescedTask(async () => void (await this.decideDeletes()), (run) => void this.link.track(run));
  private readonly wake: DeadlineTimer;

  constructor(
    private readonly instance: ClusterInstance,
    private readonly link: ClusterAdmissionLink,
    private readonly config: ResolvedAdmissionConfig,
    private readonly clock: Clock,
    /** A decision of the controller (with its look-ups) that carries the pending deletes. */
    private readonly decideDeletes: () => Promise<unknown>,
    /** The controller's view of the cluster, shown this instance's reports at once. */
    private readonly view: ClusterView,
  ) {
    this.wake = new DeadlineTimer(clock, () => this.link.started && this.recorder.trigger());
  }

  /**
   * One decision after this instance's earlier ones. When its turn comes, `lookUp()` names the requests
   * of this instance to look up (which hold a permit, which still wait); `apply` gets the outcome.
   */
  decide<T>(plan: DecisionPlan, lookUp: () => readonly string[], apply: (outcome: DecisionOutcome) => T): Promise<T> {
    const decided = this.chain.then(async () => {
      const retire = [...this.retiring.keys()];
      const { settles, reports } = this;
      this.settles = [];
      this.reports = [];
      const outcome = await this.link
        .track(
          runDecision(this.instance.pool, {
            instanceId: this.instance.instanceId,
            config: this.config,
            retire,
            ...(plan.retireAll ? { retireAll: true } : {}),
            lookUp: lookUp(),
            submit: plan.submit,
            settles,
            reports,
            now: () => this.clock.monotonicNow(),
            wallNow: () => this.clock.wallNow(),
          }),
        )
        .catch((error: unknown) => {
          // nothing was committed: the next decision carries them
          this.settles.unshift(...settles);
          this.reports.unshift(...reports);
          throw error;
        });
      for (const ref of retire) this.retiring.delete(ref);
      try {
        return apply(outcome);
      } finally {
        // reports recorded while it ran are not in its reading yet
        this.reports.forEach((record) => this.showReport(record));
      }
    });
    this.chain = decided.catch(() => undefined);
    return decided;
  }

  /** The row of `ref` must go; `removal` is what the view already lost for it. */
  retire(ref: string, removal: Removal | null = null): void {
    this.retiring.set(ref, removal);
    if (this.link.started) this.retirer.trigger();
  }

  /** `permit.settle` of a request of this instance (flow control): carried by its next decision, which it asks for. */
  settled(entry: ClusterRequest, actual: number): void {
    if (!this.config.flowControl) return;
    this.settles.push({ agentId: entry.agentId, tenant: entry.tenant, estimated: entry.cost, actual });
    if (this.link.started) this.recorder.trigger();
  }

  /** `permit.report` of a request of this instance (an adaptive agent): carried by its next decision, which it asks for. */
  reported(entry: ClusterRequest, report: WorkReport): void {
    if (!this.config.flow.adaptive.has(entry.agentId)) return;
    const record = { requestRef: entry.ref, agentId: entry.agentId, report, saturated: entry.saturated, at: this.clock.wallNow() };
    this.reports.push(record);
    this.showReport(record);
    if (this.link.started) this.recorder.trigger();
  }

  /** Applies a report of this instance to the view at once, as its next decision will (spec 09 §6). */
  private showReport(record: ReportRecord): void {
    const settings = this.config.flow.adaptive.get(record.agentId);
    const staticLimit = agentLimitOf(this.config, record.agentId);
    const state = settings && this.view.adaptiveOf(record.agentId, () => initialAdaptiveState(staticLimit));
    if (state && settings) applyReport(state, settings, staticLimit, record.report, record.saturated ?? false, record.at);
  }

  /** A decision once `ms` have passed (`Infinity`: none), when a queued request may have become rate-eligible (spec 09 §5). */
  wakeAfter(ms: number): void {
    this.wake.arm(ms === Infinity || !this.link.started ? Infinity : this.clock.monotonicNow() + ms);
  }

  /** Removals made since the running decision took its deletes: not in its counts yet. */
  removedSince(): Removal[] {
    return [...this.retiring.values()].filter((removal): removal is Removal => removal !== null);
  }

  /** The last decision of this instance, at stop: deletes every row of its id (best effort; the reap does it otherwise). */
  async leave(): Promise<void> {
    this.wake.clear();
    const leave = { instanceId: this.instance.instanceId, config: this.config, retire: [], retireAll: true, lookUp: [], now: () => this.clock.monotonicNow(), wallNow: () => this.clock.wallNow() };
    await runDecision(this.instance.pool, leave).catch(() => undefined);
  }

  private async retireAll(): Promise<void> {
    const policy = { attempts: Infinity, delayMs: RETIRE_BACKOFF, retryable: () => this.link.started, signal: this.link.stopSignal };
    while (this.retiring.size > 0 && this.link.started) await retry(this.decideDeletes, policy, this.clock);
  }
}

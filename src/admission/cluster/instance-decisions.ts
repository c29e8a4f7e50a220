import type { ResolvedAdmissionConfig } from '../admission-config';
import { CoalescedTask } from '../../shared/async/coalesced-task';
import type { Clock } from '../../shared/time/clock';
import { exponentialBackoff, retry } from '../../shared/time/retry';
import type { ClusterInstance } from '../../cluster/cluster-instance';
import { runDecision, type DecisionOutcome, type SubmitPlan } from './admission-decisions';
import type { ClusterAdmissionLink } from './cluster-admission-link';
import type { Removal } from './cluster-view';

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

  constructor(
    private readonly instance: ClusterInstance,
    private readonly link: ClusterAdmissionLink,
    private readonly config: ResolvedAdmissionConfig,
    private readonly clock: Clock,
    /** A decision of the controller (with its look-ups) that carries the pending deletes. */
    private readonly decideDeletes: () => Promise<unknown>,
  ) {}

  /**
   * One decision after this instance's earlier ones. When its turn comes, `lookUp()` names the requests
   * of this instance to look up (which hold a permit, which still wait); `apply` gets the outcome.
   */
  decide<T>(plan: DecisionPlan, lookUp: () => readonly string[], apply: (outcome: DecisionOutcome) => T): Promise<T> {
    const decided = this.chain.then(async () => {
      const retire = [...this.retiring.keys()];
      const outcome = await this.link.track(
        runDecision(this.instance.pool, {
          instanceId: this.instance.instanceId,
          config: this.config,
          retire,
          ...(plan.retireAll ? { retireAll: true } : {}),
          lookUp: lookUp(),
          submit: plan.submit,
          now: () => this.clock.monotonicNow(),
        }),
      );
      for (const ref of retire) this.retiring.delete(ref);
      return apply(outcome);
    });
    this.chain = decided.catch(() => undefined);
    return decided;
  }

  /** The row of `ref` must go; `removal` is what the view already lost for it. */
  retire(ref: string, removal: Removal | null = null): void {
    this.retiring.set(ref, removal);
    if (this.link.started) this.retirer.trigger();
  }

  /** Removals made since the running decision took its deletes: not in its counts yet. */
  removedSince(): Removal[] {
    return [...this.retiring.values()].filter((removal): removal is Removal => removal !== null);
  }

  /** The last decision of this instance, at stop: deletes every row of its id (best effort; the reap does it otherwise). */
  async leave(): Promise<void> {
    const leave = { instanceId: this.instance.instanceId, config: this.config, retire: [], retireAll: true, lookUp: [], now: () => this.clock.monotonicNow() };
    await runDecision(this.instance.pool, leave).catch(() => undefined);
  }

  private async retireAll(): Promise<void> {
    const policy = { attempts: Infinity, delayMs: RETIRE_BACKOFF, retryable: () => this.link.started, signal: this.link.stopSignal };
    while (this.retiring.size > 0 && this.link.started) await retry(this.decideDeletes, policy, this.clock);
  }
}

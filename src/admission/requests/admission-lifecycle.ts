import { systemClock, type Clock } from '../../shared/time/clock';
import { DeadlineTimer } from '../../shared/time/deadline-timer';
import { isValidId } from '../../shared/ids/id-rule';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { emitSafely, type TelemetrySink } from '../../telemetry/telemetry-sink';
import { resolveAdmissionConfig, type AdmissionConfig, type ResolvedAdmissionConfig } from '../admission-config';
import { parseRequestOptions, type AdmissionRequestOptions, type ParsedRequest } from '../admission-request';
import type { AdmissionOutcome, AdmissionStatus } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import { IssuedPermit, isPermitObserved, revokePermit, type Permit, type PermitIssuer, type RevocationOutcome, type WorkReport } from '../permit';
import { admissionStatusRecord, decisionPayload, EffectQueue, type AgentCounts, type TenantCounts } from './admission-effects';
import { DrainWaiters, RecentFailures } from './admission-waiters';
import { reportableTenant } from '../flow/flow-config';
import type { TrackedRequest } from './tracked-request';

/** Collaborators of an admission controller, local or cluster. */
export interface AdmissionControllerDeps {
  /** Time source for deadlines, records and timers (in cluster mode also the poll and the retries). @default the system clock */
  clock?: Clock;
  /** Receives `agent_runtime.admission.decision` events (in cluster mode, those of this instance's requests). @default none */
  events?: TelemetrySink;
}

/**
 * The request state machine both admission controllers share (spec 01 §5.2, §5.3, §5.6, §6, §9): a
 * request is admitted, queued, granted, revoked, or leaves the queue without a permit (expiry, cancel,
 * abort, drain), exactly once; its waiters are settled and its owner and requester signals watched.
 * A variant decides the grants and keeps its own counts through the hooks at the end of this class.
 *
 * Every transition is synchronous; promise settlements, permit-signal aborts and telemetry are
 * collected during it and performed once the state is consistent (`operate`).
 */
export abstract class AdmissionLifecycle<R extends TrackedRequest, S extends AdmissionStatus> {
  protected readonly config: ResolvedAdmissionConfig;
  protected readonly clock: Clock;
  /** This controller's requests that have not ended (pending, queued or active), by ref. */
  protected readonly requests = new Map<string, R>();
  /** Failures of queued requests, for `await`. */
  protected readonly recentFailures = new RecentFailures();
  protected readonly drainWaiters = new DrainWaiters();
  protected readonly expiryTimer: DeadlineTimer;
  /** Set by the first `beginDrain`, never cleared. */
  protected draining = false;
  private drainStartedAt: number | null = null;
  private readonly events: TelemetrySink | undefined;
  private readonly effects = new EffectQueue();

  constructor(config: AdmissionConfig | undefined, deps: AdmissionControllerDeps) {
    this.config = resolveAdmissionConfig(config);
    this.clock = deps.clock ?? systemClock;
    this.events = deps.events;
    this.expiryTimer = new DeadlineTimer(this.clock, () => this.operate(() => this.expire(this.now())));
  }

  /** Spec 01 §5.1 steps 1–3, decided before any capacity is looked at. */
  protected admit(agentId: string, opts: AdmissionRequestOptions | undefined, now: number): ParsedRequest {
    if (this.draining) throw new AdmissionError('deployment_draining');
    if (!isValidId(agentId)) throw new AdmissionError('invalid_admission_options', { field: 'agentId' });
    const request = parseRequestOptions(opts, this.config, now);
    if (request.signal?.aborted || request.owner?.aborted) {
      this.decide(request.owner?.aborted ? 'owner_down' : 'requester_down', agentId, 0, request.tenant);
      throw request.signal?.aborted ? request.signal.reason : new AdmissionError('owner_down');
    }
    return request;
  }

  protected track(entry: R): void {
    this.requests.set(entry.ref, entry);
  }

  /** Listens to the request's owner and requester signals until it ends. */
  protected watch(entry: R): void {
    entry.listen(() => this.onAbort(entry));
  }

  /** Hands `entry` its permit (spec 01 §5.2): counted, requester no longer watched, waiters settled. */
  protected activate(entry: R, permitId: string, waitMs: number): void {
    this.granted(entry);
    entry.state = 'active';
    const permit = new IssuedPermit(permitId, entry.agentId, entry.ref, this.permitIssuer, entry);
    entry.permit = permit;
    entry.stopListeningToSignal();
    if (entry.owner && !entry.ownerListener) entry.listenToOwner(() => this.onAbort(entry));
    entry.resolveWaiters(permit, this.effects);
    this.decide('granted', entry.agentId, waitMs, entry.tenant);
  }

  /** The one revoke path of release, cancel of an active request and owner abort (spec 01 §5.6). */
  protected revoke(entry: R, outcome: RevocationOutcome): boolean {
    if (entry.state !== 'active') return false;
    const now = this.now();
    entry.state = 'done';
    this.requests.delete(entry.ref);
    entry.stopListening();
    this.revoked(entry);
    const permit = entry.permit as IssuedPermit;
    if (isPermitObserved(permit)) this.effects.push(() => revokePermit(permit, outcome));
    else revokePermit(permit, outcome);
    this.decide(outcome, entry.agentId, now - entry.submittedAt, entry.tenant);
    this.notifyIfDrained();
    this.dispatch(now);
    return true;
  }

  /** A queued request leaves without a permit: its waiters get `reason`, and `await` remembers it. */
  protected removeQueued(entry: R, reason: unknown, outcome: AdmissionOutcome, now: number): void {
    this.dequeued(entry);
    this.finish(entry, reason);
    this.recentFailures.remember(entry.ref, reason);
    this.decide(outcome, entry.agentId, now - entry.submittedAt, entry.tenant);
  }

  /** Spec 01 §4: waiters get `signal.reason` if it aborted, else `owner_down`; the outcome names the owner if it aborted. */
  protected abortQueued(entry: R, now: number): void {
    const reason = entry.signal?.aborted ? entry.signal.reason : new AdmissionError('owner_down');
    this.removeQueued(entry, reason, entry.owner?.aborted ? 'owner_down' : 'requester_down', now);
  }

  /** Ends a request that holds no permit and fails its waiters with `reason`. */
  protected finish(entry: R, reason: unknown): void {
    entry.state = 'done';
    entry.stopListening();
    this.requests.delete(entry.ref);
    entry.rejectWaiters(reason, this.effects);
  }

  /** Fails the queued requests whose deadline has passed (spec 01 §5.3). */
  protected purge(now: number): void {
    for (let entry = this.earliestDeadline(); entry && entry.deadline <= now; entry = this.earliestDeadline()) {
      this.removeQueued(entry, new AdmissionError('queue_deadline_exceeded'), 'expired', now);
    }
  }

  /** The first `beginDrain`: refuses new submits and fails the queued requests in enqueue order. */
  protected stopAdmitting(): void {
    if (this.draining) return;
    this.draining = true;
    this.drainStartedAt = this.clock.wallNow();
    const now = this.now();
    this.purge(now);
    const queued = [...this.requests.values()].filter((entry) => entry.state === 'queued').sort((a, b) => a.seq - b.seq);
    for (const entry of queued) this.removeQueued(entry, new AdmissionError('deployment_draining'), 'deployment_draining', now);
  }

  /** Tells the `drain()` callers, once nothing is held, the status at that moment. */
  protected notifyIfDrained(): void {
    if (!this.drainWaiters.waiting || !this.isDrained()) return;
    const waiters = this.drainWaiters.take();
    const status = this.snapshot();
    this.effects.push(() => waiters.forEach((waiter) => waiter(status)));
  }

  /** Reports one transition; `tenant` is carried only when the configuration names it (spec 09 §7). */
  protected decide(outcome: AdmissionOutcome, agentId: string, waitMs: number, tenant?: string): void {
    const events = this.events;
    if (events === undefined) return;
    const payload = decisionPayload(outcome, agentId, waitMs, this.active, this.queued, reportableTenant(this.config.flow, tenant));
    this.effects.push(() => emitSafely(events, TelemetryEvents.admissionDecision, payload));
  }

  /**
   * Runs one operation, then arms the expiry timer and performs the collected side effects. A
   * listener that calls back in starts a new operation whose effects join the running flush.
   */
  protected operate<T>(operation: () => T): T {
    try {
      return operation();
    } finally {
      this.expiryTimer.arm(this.earliestDeadline()?.deadline ?? Infinity);
      this.effects.flush();
    }
  }

  /** The spec 01 §5.8 record of the counts `active` and `queued` and of `agents`. */
  protected statusRecord(agents: Iterable<AgentCounts>, tenants?: Iterable<TenantCounts>, costInUse?: number): AdmissionStatus {
    const counts = { draining: this.draining, drainStartedAt: this.drainStartedAt, active: this.active, queued: this.queued, costInUse };
    return admissionStatusRecord(counts, this.config, agents, tenants);
  }

  protected now(): number {
    return this.clock.monotonicNow();
  }

  private expire(now: number): void {
    this.purge(now);
    this.dispatch(now);
  }

  private onAbort(entry: R): void {
    this.operate(() => {
      // a pending request is judged once its submit decision is known
      if (entry.state === 'queued') {
        const now = this.now();
        this.abortQueued(entry, now);
        this.dispatch(now);
      } else if (entry.state === 'active' && entry.owner?.aborted) {
        this.revoke(entry, 'owner_down');
      }
    });
  }

  /** What the permits of this controller call back: release, and the flow-control records of spec 09 §5–§6. */
  private readonly permitIssuer: PermitIssuer = {
    release: (permit) => this.release(permit),
    settle: (record, actualCost) => this.operate(() => this.settled(record as R, actualCost, this.now())),
    report: (record, report) => this.operate(() => this.reported(record as R, report, this.now())),
  };

  /** Spec 01 §5.6, what a permit's `Symbol.dispose` calls. */
  abstract release(permit: Permit): boolean;

  // ---- what a variant decides ----------------------------------------------------------------

  /** Permits held, where the variant counts them (this process, or every instance of the cluster). */
  protected abstract readonly active: number;
  /** Queued requests, counted likewise. */
  protected abstract readonly queued: number;
  /** Permits this controller issued and still holds: what a drain waits for. */
  protected abstract permitsHeld(): number;
  /** The queued request with the earliest finite deadline. */
  protected abstract earliestDeadline(): R | undefined;
  /** `entry` is about to hold a permit: count it. */
  protected abstract granted(entry: R): void;
  /** `entry` gave its permit back: uncount it. */
  protected abstract revoked(entry: R): void;
  /** `entry` left the queue without a permit: take it out of the queue and the counts. */
  protected abstract dequeued(entry: R): void;
  /** The status record, with the variant's own keys. */
  protected abstract snapshot(): S;

  /** `permit.settle(actualCost)` of `entry`'s permit, held or revoked (validated, once). None by default. */
  protected settled(_entry: R, _actualCost: number, _now: number): void {}

  /** `permit.report(report)` of `entry`'s permit, held or revoked (validated, once). None by default. */
  protected reported(_entry: R, _report: WorkReport, _now: number): void {}

  /** Grants what freed capacity allows, after a revoke, a cancel, an abort or an expiry. None by default. */
  protected dispatch(_now: number): void {}

  /** Whether a `drain()` may resolve. */
  protected isDrained(): boolean {
    return this.permitsHeld() === 0;
  }
}

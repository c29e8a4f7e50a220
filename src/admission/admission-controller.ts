import { addTimedWaiter, DrainWaiters, runUnderPermit } from './admission-waiters';
import { admissionStatusRecord, decisionPayload, EffectQueue } from './admission-effects';
import type { AdmissionService } from './admission-service';
import { systemClock, type Clock } from '../shared/time/clock';
import { DeadlineTimer } from '../shared/time/deadline-timer';
import { handled, rejectedWith } from '../shared/async/handled-promise';
import { randomId } from '../shared/ids/random-id';
import { TelemetryEvents } from '../telemetry/telemetry-events';
import { emitSafely, type TelemetrySink } from '../telemetry/telemetry-sink';
import { isValidId } from '../shared/ids/id-rule';
import { isDrainTimeoutMs, isTimeoutMs, resolveAdmissionConfig, type AdmissionConfig, type ResolvedAdmissionConfig } from './admission-config';
import { AdmissionQueue, AgentState, RequestEntry, type Waiter } from './admission-queue';
import { deadlineAfterMs, parseRequestOptions, type AdmissionRequestOptions } from './admission-request';
import type { AdmissionOutcome, AdmissionStatus, SubmitResult } from './admission.types';
import { AdmissionError } from './admission.errors';
import { IssuedPermit, isPermitObserved, issuerRecordOf, permitIdOf, revokePermit, type Permit, type RevocationOutcome } from './permit';

/** Collaborators of an {@link AdmissionController}. */
export interface AdmissionControllerDeps {
  /** Time source for deadlines, records and timers. @default the system clock */
  clock?: Clock;
  /** Receives `agent_runtime.admission.decision` events. @default none */
  events?: TelemetrySink;
}

/** Failures of queued requests remembered for `await` (oldest forgotten first). */
const RECENT_FAILURES = 1024;

const invalidOptions = (field: string) => new AdmissionError('invalid_admission_options', { field });

/**
 * Bounds concurrent agent work globally and per agent (spec 01). A caller gets a permit at once,
 * waits in a bounded FIFO queue until an absolute deadline, or is refused with a typed code.
 * Capacity comes back exactly once: on release, cancel, or abort of the owner's signal.
 *
 * Every state transition is synchronous; promise settlements, permit-signal aborts and telemetry
 * are collected during a transition and performed once the state is consistent.
 *
 * @example
 * const admission = new AdmissionController({ globalLimit: 256, overflow: 'queue' });
 * const answer = await admission.run('support-agent', (permit, signal) => callModel(signal));
 */
export class AdmissionController implements AdmissionService {
  private readonly config: ResolvedAdmissionConfig;
  private readonly clock: Clock;
  private readonly events: TelemetrySink | undefined;

  private readonly agents = new Map<string, AgentState>();
  private readonly requests = new Map<string, RequestEntry>();
  private readonly recentFailures = new Map<string, unknown>();
  private readonly queue = new AdmissionQueue();
  private readonly expiryTimer: DeadlineTimer;
  private active = 0;
  private sequence = 0;
  private draining = false;
  private drainStartedAt: number | null = null;
  private readonly drainWaiters = new DrainWaiters();

  private readonly effects = new EffectQueue();

  constructor(config?: AdmissionConfig, deps: AdmissionControllerDeps = {}) {
    this.config = resolveAdmissionConfig(config);
    this.clock = deps.clock ?? systemClock;
    this.events = deps.events;
    this.expiryTimer = new DeadlineTimer(this.clock, () => this.operate(() => this.dispatch(this.now())));
  }

  /** `performance.now() + ms` on the system clock, or `'infinity'`. */
  static deadlineAfter(ms: number | 'infinity'): number | 'infinity' {
    return deadlineAfterMs(ms, systemClock.monotonicNow());
  }

  /** `monotonicNow() + ms` on this controller's clock, or `'infinity'`. */
  deadlineAfter(ms: number | 'infinity'): number | 'infinity' {
    return deadlineAfterMs(ms, this.now());
  }

  /**
   * Asks for capacity without waiting: a permit now, a place in the queue, or a thrown
   * {@link AdmissionError} (`deployment_draining`, `invalid_admission_options`,
   * `concurrency_limit_reached`, `admission_queue_full`, `queue_deadline_exceeded`, `owner_down`).
   */
  submit(agentId: string, opts?: AdmissionRequestOptions): SubmitResult {
    return this.operate(() => {
      const entry = this.submitEntry(agentId, opts);
      if (entry.state === 'active') {
        return Object.freeze({ requestRef: entry.ref, status: 'granted' as const, permit: entry.permit as Permit });
      }
      const deadline = entry.deadline === Infinity ? ('infinity' as const) : entry.deadline;
      return Object.freeze({ requestRef: entry.ref, status: 'queued' as const, deadline });
    });
  }

  /** `submit`, then waits for a queued request's outcome. Never throws synchronously. */
  acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit> {
    try {
      const entry = this.submitEntry(agentId, opts);
      if (entry.state === 'active') return Promise.resolve(entry.permit as Permit);
      let waiter!: Waiter;
      const promise = new Promise<Permit>((resolve, reject) => (waiter = { resolve, reject }));
      waiter.promise = promise;
      this.addWaiter(entry, waiter);
      return promise;
    } catch (error) {
      return rejectedWith<Permit>(error);
    } finally {
      this.settle();
    }
  }

  /**
   * Waits for the outcome of a request without changing it. `timeoutMs` passing first rejects with
   * `await_timeout` and leaves the request queued; an unknown or released ref gives `not_found`.
   */
  await(requestRef: string, timeoutMs: number | 'infinity' = 'infinity'): Promise<Permit> {
    if (typeof requestRef !== 'string' || !isTimeoutMs(timeoutMs)) return rejectedWith(new AdmissionError('invalid_await'));
    return this.operate(() => {
      this.purge(this.now());
      const entry = this.requests.get(requestRef);
      if (entry?.state === 'active') return Promise.resolve(entry.permit as Permit);
      if (entry?.state === 'queued') {
        if (timeoutMs === 0) return rejectedWith<Permit>(new AdmissionError('await_timeout'));
        return handled(new Promise<Permit>((resolve, reject) => addTimedWaiter(entry, this.clock, timeoutMs, resolve, reject)));
      }
      if (this.recentFailures.has(requestRef)) return rejectedWith<Permit>(this.recentFailures.get(requestRef));
      return rejectedWith<Permit>(new AdmissionError('not_found'));
    });
  }

  /** Cancels a queued or active request; `true` at most once per request. */
  cancel(requestRef: string): boolean {
    if (typeof requestRef !== 'string') throw new AdmissionError('invalid_request_ref');
    return this.operate(() => {
      const now = this.now();
      this.purge(now);
      const entry = this.requests.get(requestRef);
      if (entry?.state === 'queued') {
        this.removeQueued(entry, new AdmissionError('cancelled'), 'cancelled', now);
        this.dispatch(now);
        return true;
      }
      return entry !== undefined && this.revoke(entry, 'cancelled');
    });
  }

  /** Returns the capacity of a permit issued by this controller; `true` at most once per permit. */
  release(permit: Permit): boolean {
    const entry = issuerRecordOf(permit) as RequestEntry | undefined;
    if (entry === undefined) {
      permitIdOf(permit);
      return false;
    }
    if (entry.issuer !== this) return false;
    try {
      return this.revoke(entry, 'released');
    } finally {
      this.settle();
    }
  }

  /**
   * Runs `fn` under a permit and releases it on every path. Without `owner`, `opts.signal` also
   * serves as owner, so aborting it stops queued and running work alike.
   */
  run<T>(agentId: string, fn: (permit: Permit, signal: AbortSignal) => T | Promise<T>, opts?: AdmissionRequestOptions): Promise<T> {
    return handled(runUnderPermit(this, agentId, fn, opts));
  }

  /** Aggregate counts and limits: no permit ids, request refs, signals or content. */
  status(): AdmissionStatus {
    return this.operate(() => {
      this.purge(this.now());
      return this.snapshot();
    });
  }

  /** Stops admitting (idempotent): fails every queued request with `deployment_draining`. */
  beginDrain(): AdmissionStatus {
    return this.operate(() => {
      if (!this.draining) {
        this.draining = true;
        this.drainStartedAt = this.clock.wallNow();
        const now = this.now();
        this.purge(now);
        for (const entry of this.requests.values()) {
          if (entry.state === 'queued') this.removeQueued(entry, new AdmissionError('deployment_draining'), 'deployment_draining', now);
        }
      }
      return this.snapshot();
    });
  }

  /**
   * `beginDrain()`, then resolves with the status once no permit is held. Rejects with
   * `drain_timeout` (revoking nothing) when `timeoutMs` passes first.
   */
  drain(timeoutMs: number = this.config.drainTimeoutMs): Promise<AdmissionStatus> {
    if (!isDrainTimeoutMs(timeoutMs)) return rejectedWith(new AdmissionError('invalid_drain_timeout'));
    const status = this.beginDrain();
    if (this.active === 0) return Promise.resolve(status);
    return this.drainWaiters.wait(this.clock, timeoutMs, () => this.active);
  }

  // ---- transitions -------------------------------------------------------------------------

  private submitEntry(agentId: unknown, opts: unknown): RequestEntry {
    if (this.draining) throw new AdmissionError('deployment_draining');
    if (!isValidId(agentId)) throw invalidOptions('agentId');
    const now = this.now();
    const request = parseRequestOptions(opts as AdmissionRequestOptions | undefined, this.config, now);
    if (request.signal?.aborted || request.owner?.aborted) {
      this.decide(request.owner?.aborted ? 'owner_down' : 'requester_down', agentId, 0);
      throw request.signal?.aborted ? request.signal.reason : new AdmissionError('owner_down');
    }
    this.purge(now);
    const agent = this.agents.get(agentId) ?? new AgentState(agentId, this.config.agentLimits.get(agentId) ?? this.config.defaultAgentLimit);
    if (this.active < this.config.globalLimit && agent.active < agent.limit) {
      const entry = new RequestEntry(this, randomId('request-'), agent, this.sequence++, request.deadline, now, request.owner, undefined);
      this.track(entry);
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
    const entry = new RequestEntry(this, randomId('request-'), agent, this.sequence++, request.deadline, now, request.owner, request.signal);
    this.track(entry);
    this.queue.enqueue(entry);
    this.watch(entry);
    this.decide('queued', agentId, 0);
    return entry;
  }

  private track(entry: RequestEntry): void {
    const agent = entry.agent;
    if (agent.active === 0 && agent.queue.size === 0) this.agents.set(agent.id, agent);
    this.requests.set(entry.ref, entry);
  }

  /** Grants the oldest eligible requests while global capacity lasts. */
  private dispatch(now: number): void {
    this.purge(now);
    while (this.active < this.config.globalLimit) {
      const entry = this.queue.oldestEligible();
      if (entry === undefined) return;
      this.queue.remove(entry);
      this.grant(entry, now);
    }
  }

  private grant(entry: RequestEntry, now: number): void {
    const agent = entry.agent;
    entry.state = 'active';
    agent.active++;
    this.active++;
    if (agent.queue.size > 0 && agent.active === agent.limit) this.queue.refresh(agent);
    const permit = new IssuedPermit(randomId('permit-'), agent.id, entry.ref, this.releaseIgnoringResult, entry);
    entry.permit = permit;
    if (entry.signalListener) {
      (entry.signal as AbortSignal).removeEventListener('abort', entry.signalListener);
      entry.signalListener = undefined;
    }
    if (entry.owner && !entry.ownerListener) this.listenToOwner(entry);
    const waiters = entry.waiters;
    if (waiters) {
      entry.waiters = null;
      this.effects.push(() => waiters.forEach((waiter) => waiter.resolve(permit)));
    }
    this.decide('granted', agent.id, now - entry.submittedAt);
  }

  /** The one revoke path of release, cancel of an active request and owner abort. */
  private revoke(entry: RequestEntry, outcome: RevocationOutcome): boolean {
    if (entry.state !== 'active') return false;
    const now = this.now();
    const agent = entry.agent;
    entry.state = 'done';
    this.requests.delete(entry.ref);
    if (entry.ownerListener) {
      (entry.owner as AbortSignal).removeEventListener('abort', entry.ownerListener);
      entry.ownerListener = undefined;
    }
    agent.active--;
    this.active--;
    if (agent.queue.size > 0 && agent.active === agent.limit - 1) this.queue.refresh(agent);
    this.forgetIfIdle(agent);
    const permit = entry.permit as IssuedPermit;
    if (isPermitObserved(permit)) this.effects.push(() => revokePermit(permit, outcome));
    else revokePermit(permit, outcome);
    this.decide(outcome, agent.id, now - entry.submittedAt);
    if (this.active === 0 && this.drainWaiters.waiting) {
      const waiters = this.drainWaiters.take();
      const status = this.snapshot();
      this.effects.push(() => waiters.forEach((waiter) => waiter(status)));
    }
    this.dispatch(now);
    return true;
  }

  /** Takes a queued request out of the queue and fails its waiters with `reason`. */
  private removeQueued(entry: RequestEntry, reason: unknown, outcome: AdmissionOutcome, now: number): void {
    this.queue.remove(entry);
    entry.state = 'done';
    this.unwatch(entry);
    this.requests.delete(entry.ref);
    this.forgetIfIdle(entry.agent);
    this.recentFailures.set(entry.ref, reason);
    if (this.recentFailures.size > RECENT_FAILURES) this.recentFailures.delete(this.recentFailures.keys().next().value as string);
    const waiters = entry.waiters;
    if (waiters) {
      entry.waiters = null;
      for (const waiter of waiters) if (waiter.promise) handled(waiter.promise);
      this.effects.push(() => waiters.forEach((waiter) => waiter.reject(reason)));
    }
    this.decide(outcome, entry.agent.id, now - entry.submittedAt);
  }

  private purge(now: number): void {
    for (let entry = this.queue.earliestDeadline(); entry && entry.deadline <= now; entry = this.queue.earliestDeadline()) {
      this.removeQueued(entry, new AdmissionError('queue_deadline_exceeded'), 'expired', now);
    }
  }

  private onAbort(entry: RequestEntry): void {
    this.operate(() => {
      if (entry.state === 'queued') {
        const now = this.now();
        const reason = entry.signal?.aborted ? entry.signal.reason : new AdmissionError('owner_down');
        this.removeQueued(entry, reason, entry.owner?.aborted ? 'owner_down' : 'requester_down', now);
        this.dispatch(now);
      } else if (entry.owner?.aborted) {
        this.revoke(entry, 'owner_down');
      }
    });
  }

  // ---- listeners, waiters, effects ---------------------------------------------------------

  private watch(entry: RequestEntry): void {
    if (entry.owner) this.listenToOwner(entry);
    if (entry.signal && entry.signal !== entry.owner) {
      entry.signalListener = () => this.onAbort(entry);
      entry.signal.addEventListener('abort', entry.signalListener, { once: true });
    }
  }

  private listenToOwner(entry: RequestEntry): void {
    entry.ownerListener = () => this.onAbort(entry);
    (entry.owner as AbortSignal).addEventListener('abort', entry.ownerListener, { once: true });
  }

  private unwatch(entry: RequestEntry): void {
    if (entry.ownerListener) (entry.owner as AbortSignal).removeEventListener('abort', entry.ownerListener);
    if (entry.signalListener) (entry.signal as AbortSignal).removeEventListener('abort', entry.signalListener);
    entry.ownerListener = undefined;
    entry.signalListener = undefined;
  }

  private addWaiter(entry: RequestEntry, waiter: Waiter): void {
    (entry.waiters ??= []).push(waiter);
  }

  private decide(outcome: AdmissionOutcome, agentId: string, waitMs: number): void {
    const events = this.events;
    if (events === undefined) return;
    const payload = decisionPayload(outcome, agentId, waitMs, this.active, this.queue.length);
    this.effects.push(() => emitSafely(events, TelemetryEvents.admissionDecision, payload));
  }

  /**
   * Runs one operation, then arms the expiry timer and performs the collected side effects. A
   * listener that calls back in starts a new operation whose effects join the running flush.
   */
  private operate<T>(operation: () => T): T {
    try {
      return operation();
    } finally {
      this.settle();
    }
  }

  /** The end of every operation: arm the expiry timer, then perform the collected side effects. */
  private settle(): void {
    this.expiryTimer.arm(this.queue.earliestDeadline()?.deadline ?? Infinity);
    this.effects.flush();
  }

  private forgetIfIdle(agent: AgentState): void {
    if (agent.active === 0 && agent.queue.size === 0) this.agents.delete(agent.id);
  }

  private snapshot(): AdmissionStatus {
    return admissionStatusRecord(
      { draining: this.draining, drainStartedAt: this.drainStartedAt, active: this.active, queued: this.queue.length },
      this.config,
      [...this.agents.values()].map((agent) => ({ id: agent.id, active: agent.active, queued: agent.queue.size, limit: agent.limit })),
    );
  }

  private now(): number {
    return this.clock.monotonicNow();
  }

  private readonly releaseIgnoringResult = (permit: Permit): void => {
    this.release(permit);
  };
}

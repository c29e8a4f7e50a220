import { ClusterView } from './cluster-view';
import { CoalescedTask } from '../../shared/async/coalesced-task';
import { addTimedWaiter, DrainWaiters, runUnderPermit } from '../admission-waiters';
import { admissionStatusRecord, decisionPayload, EffectQueue } from '../admission-effects';
import { isDrainTimeoutMs, isTimeoutMs, resolveAdmissionConfig, type AdmissionConfig, type ResolvedAdmissionConfig } from '../admission-config';
import type { Waiter } from '../admission-queue';
import { deadlineAfterMs, parseRequestOptions, type AdmissionRequestOptions } from '../admission-request';
import type { AdmissionService } from '../admission-service';
import type { AdmissionOutcome, AdmissionStatus, SubmitResult } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import { IssuedPermit, isPermitObserved, issuerRecordOf, permitIdOf, revokePermit, type Permit, type RevocationOutcome } from '../permit';
import { NotificationListener } from '../../database/notification-listener';
import { classifyFailure } from '../../database/postgres-failure';
import type { PgPool } from '../../database/postgres-pool';
import { runStatement } from '../../database/statement-runner';
import { systemClock, type Clock } from '../../shared/time/clock';
import { DeadlineTimer } from '../../shared/time/deadline-timer';
import { handled, rejectedWith } from '../../shared/async/handled-promise';
import { isValidId } from '../../shared/ids/id-rule';
import { IndexedMinHeap } from '../../shared/collections/indexed-min-heap';
import { randomId } from '../../shared/ids/random-id';
import { exponentialBackoff, retry } from '../../shared/time/retry';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { emitSafely, type TelemetrySink } from '../../telemetry/telemetry-sink';
import type { ClusterInstance } from '../../cluster/cluster-instance';
import { admissionConfigFingerprint } from './admission-config-fingerprint';
import { runDecision, storeUnavailable, type DecisionOutcome, type SubmitDecision } from './admission-decisions';
import { ADMISSION_CHANNEL, SELECT_HELD } from './admission-sql';
import { agreeOnConfig, assertAdmissionSchema } from './cluster-admission-startup';
import { resolveClusterAdmissionOptions, type ClusterAdmissionOptions, type ResolvedClusterAdmissionOptions } from './cluster-admission-options';
import type { ClusterAdmissionStatus } from './cluster-admission.types';
import { ClusterRequest, earlierDeadline, type ClusterRequestState } from './cluster-request';

/** Collaborators of a {@link ClusterAdmissionController}. */
export interface ClusterAdmissionControllerDeps {
  /** Time source for deadlines, records, the poll and the retries. @default the system clock */
  clock?: Clock;
  /** Receives `agent_runtime.admission.decision` events for this instance's requests. @default none */
  events?: TelemetrySink;
}

/** Failures of queued requests remembered for `await` (oldest forgotten first). */
const RECENT_FAILURES = 1024;
/** Pause before the n-th retry of a background delete (release, cancel, abort, expiry). */
const RETIRE_BACKOFF = exponentialBackoff(50, 2000);

const invalidOptions = (field: string) => new AdmissionError('invalid_admission_options', { field });

/**
 * Admission across every instance of a cluster (spec 08 §3) with the API, options, codes and records
 * of `AdmissionController` (spec 01). Each decision is one Postgres transaction under one advisory
 * lock, counted over all live instances; grants reach the requesting instance by NOTIFY (or the
 * periodic poll). It fails closed: without the database nothing is admitted.
 *
 * This instance's own requests are known locally, so `cancel`, `release`, `await`, `status` and the
 * deadline timer answer synchronously; their database deletes run in the background and are retried
 * until they land (or the instance dies, when the reap returns the capacity).
 *
 * @example
 * const instance = new ClusterInstance({ dataSource });
 * await instance.start();
 * const admission = new ClusterAdmissionController({ globalLimit: 64, overflow: 'queue' }, { instance });
 * await admission.start();
 * const answer = await admission.run('support-agent', (permit, signal) => callModel(signal));
 */
export class ClusterAdmissionController implements AdmissionService {
  private readonly config: ResolvedAdmissionConfig;
  private readonly options: ResolvedClusterAdmissionOptions;
  private readonly instance: ClusterInstance;
  private readonly instanceId: string;
  private readonly pool: PgPool;
  private readonly clock: Clock;
  private readonly events: TelemetrySink | undefined;

  private phase: 'new' | 'starting' | 'started' | 'stopped' = 'new';
  private starting: Promise<void> | undefined = undefined;
  private listener: NotificationListener | undefined = undefined;
  private pollTimer: unknown = undefined;
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();

  private readonly requests = new Map<string, ClusterRequest>();
  private readonly deadlines = new IndexedMinHeap<ClusterRequest>(earlierDeadline);
  private readonly expiryTimer: DeadlineTimer;
  private readonly recentFailures = new Map<string, unknown>();
  /** Refs of this instance's requests whose rows (queued or granted) must go; retried until a decision lands. */
  private readonly retiring = new Map<string, Lowered | null>();
  /** This instance's decisions, one after another in call order (so its queue keeps the order of its submits). */
  private decisions: Promise<unknown> = Promise.resolve();
  private readonly retirer = new CoalescedTask(() => this.retireAll(), (run) => void this.track(run));
  /** After a notification (or a reconnection of the listener): reads which waiting requests were granted. */
  private readonly grantReader = new CoalescedTask(() => this.readGrants(), (run) => void this.track(run));
  private localActive = 0;
  private localQueued = 0;
  private pending = 0;

  private readonly view = new ClusterView();

  private draining = false;
  private drainStartedAt: number | null = null;
  private readonly drainWaiters = new DrainWaiters();
  private readonly effects = new EffectQueue();

  constructor(config: AdmissionConfig | undefined, cluster: ClusterAdmissionOptions, deps: ClusterAdmissionControllerDeps = {}) {
    this.config = resolveAdmissionConfig(config);
    this.options = resolveClusterAdmissionOptions(cluster);
    this.instance = this.options.instance;
    this.instanceId = this.instance.instanceId;
    this.pool = this.instance.pool;
    this.clock = deps.clock ?? systemClock;
    this.events = deps.events;
    this.expiryTimer = new DeadlineTimer(this.clock, () => this.operate(() => this.purge(this.now())));
  }

  /** `performance.now() + ms` on the system clock, or `'infinity'`. */
  static deadlineAfter(ms: number | 'infinity'): number | 'infinity' {
    return deadlineAfterMs(ms, systemClock.monotonicNow());
  }

  /** `monotonicNow() + ms` on this controller's clock, or `'infinity'`. */
  deadlineAfter(ms: number | 'infinity'): number | 'infinity' {
    return deadlineAfterMs(ms, this.now());
  }

  /** True while started, the LISTEN connection is up and the instance holds its lock (readiness). */
  get connected(): boolean {
    return this.phase === 'started' && this.listener?.connected === true && this.instance.live;
  }

  /**
   * Validates the three tables (`ClusterError('schema_mismatch')`), agrees on the limits with the
   * cluster (`cluster_config_mismatch`), LISTENs for grants and starts the periodic reap and poll.
   * The instance must have been started. Idempotent; a failed start may be retried.
   */
  start(): Promise<void> {
    if (this.phase === 'started') return Promise.resolve();
    if (this.phase === 'stopped') return rejectedWith(new AdmissionError('admission_store_unavailable'));
    this.starting ??= this.startOnce().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /**
   * Leaves the cluster: stops the poll and the listener, fails what is still queued here with
   * `deployment_draining`, revokes what is still held here (`owner_down`), and deletes this
   * instance's remaining rows (best effort; the reap returns them otherwise). Call it after `drain`.
   */
  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    await this.starting?.catch(() => undefined);
    const wasStarted = this.phase === 'started';
    this.phase = 'stopped';
    this.stopping.abort();
    if (this.pollTimer !== undefined) this.clock.clearTimer(this.pollTimer);
    this.pollTimer = undefined;
    this.operate(() => {
      this.stopAdmitting();
      for (const entry of [...this.requests.values()]) this.revoke(entry, 'owner_down');
    });
    this.expiryTimer.clear();
    await this.listener?.close();
    await Promise.allSettled([...this.inFlight]);
    if (!wasStarted) return;
    const leave = { instanceId: this.instanceId, config: this.config, retire: [], retireAll: true, lookUp: [], now: () => this.now() };
    await runDecision(this.pool, leave).catch(() => undefined);
  }

  /**
   * Asks the cluster for capacity: a permit now, a place in the queue, or a rejection with an
   * {@link AdmissionError} (spec 01 §5.1 codes, or `admission_store_unavailable`). Steps 1–3 (draining,
   * validation, aborted signals) are decided before any database work.
   */
  submit(agentId: string, opts?: AdmissionRequestOptions): Promise<SubmitResult> {
    let entry: ClusterRequest;
    try {
      entry = this.operate(() => this.admit(agentId, opts));
    } catch (error) {
      return rejectedWith(error);
    }
    return handled(this.decideSubmit(entry));
  }

  /** `submit`, then waits for a queued request's outcome. Never throws synchronously. */
  acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit> {
    let entry: ClusterRequest;
    try {
      entry = this.operate(() => this.admit(agentId, opts));
    } catch (error) {
      return rejectedWith(error);
    }
    let waiter!: Waiter;
    const promise = new Promise<Permit>((resolve, reject) => (waiter = { resolve, reject }));
    waiter.promise = promise;
    (entry.waiters ??= []).push(waiter);
    this.decideSubmit(entry).catch(() => undefined);
    return promise;
  }

  /**
   * Waits for the outcome of one of this instance's requests without changing it. `timeoutMs`
   * passing first rejects with `await_timeout` and leaves the request queued.
   */
  await(requestRef: string, timeoutMs: number | 'infinity' = 'infinity'): Promise<Permit> {
    if (typeof requestRef !== 'string' || !isTimeoutMs(timeoutMs)) return rejectedWith(new AdmissionError('invalid_await'));
    return this.operate(() => {
      this.purge(this.now());
      const entry = this.requests.get(requestRef);
      if (entry?.state === 'active') return Promise.resolve(entry.permit as Permit);
      if (entry?.state === 'queued' || entry?.state === 'pending') {
        if (timeoutMs === 0) return rejectedWith<Permit>(new AdmissionError('await_timeout'));
        return handled(new Promise<Permit>((resolve, reject) => addTimedWaiter(entry, this.clock, timeoutMs, resolve, reject)));
      }
      if (this.recentFailures.has(requestRef)) return rejectedWith<Permit>(this.recentFailures.get(requestRef));
      return rejectedWith<Permit>(new AdmissionError('not_found'));
    });
  }

  /** Cancels one of this instance's queued or active requests; `true` at most once per request. */
  cancel(requestRef: string): boolean {
    if (typeof requestRef !== 'string') throw new AdmissionError('invalid_request_ref');
    return this.operate(() => {
      this.purge(this.now());
      const entry = this.requests.get(requestRef);
      if (entry?.state === 'queued') {
        this.removeQueued(entry, new AdmissionError('cancelled'), 'cancelled');
        return true;
      }
      return entry !== undefined && this.revoke(entry, 'cancelled');
    });
  }

  /** Returns the capacity of a permit this controller issued; `true` at most once per permit. */
  release(permit: Permit): boolean {
    const entry = issuerRecordOf(permit) as ClusterRequest | undefined;
    if (entry === undefined) {
      permitIdOf(permit);
      return false;
    }
    if (entry.issuer !== this) return false;
    return this.operate(() => this.revoke(entry, 'released'));
  }

  /**
   * Runs `fn` under a permit and releases it on every path. Without `owner`, `opts.signal` also
   * serves as owner, so aborting it stops queued and running work alike.
   */
  run<T>(agentId: string, fn: (permit: Permit, signal: AbortSignal) => T | Promise<T>, opts?: AdmissionRequestOptions): Promise<T> {
    return handled(runUnderPermit(this, agentId, fn, opts));
  }

  /** Cluster-wide counts as last read, `instances_live`, and this instance's own counts; no ids, refs or content. */
  status(): ClusterAdmissionStatus {
    return this.operate(() => {
      this.purge(this.now());
      return this.snapshot();
    });
  }

  /** Stops this instance admitting (idempotent) and fails its queued requests with `deployment_draining`. */
  beginDrain(): ClusterAdmissionStatus {
    return this.operate(() => {
      this.stopAdmitting();
      return this.snapshot();
    });
  }

  /**
   * `beginDrain()`, then resolves with the status once this instance holds no permit and decides no
   * submit. Rejects with `drain_timeout` (revoking nothing) when `timeoutMs` passes first.
   */
  drain(timeoutMs: number = this.config.drainTimeoutMs): Promise<AdmissionStatus> {
    if (!isDrainTimeoutMs(timeoutMs)) return rejectedWith(new AdmissionError('invalid_drain_timeout'));
    const status = this.beginDrain();
    if (this.localActive === 0 && this.pending === 0) return Promise.resolve(status);
    return this.drainWaiters.wait(this.clock, timeoutMs, () => this.localActive);
  }

  // ---- start-up, background work ----------------------------------------------------------

  private async startOnce(): Promise<void> {
    this.phase = 'starting';
    try {
      await assertAdmissionSchema(this.instance.dataSource);
      await agreeOnConfig(this.pool, admissionConfigFingerprint(this.config));
      const listener = new NotificationListener(
        this.pool,
        { channels: [ADMISSION_CHANNEL], backoff: this.options.listenerBackoff },
        { notified: (_channel, payload) => payload === this.instanceId && this.syncGrants(), reconnected: () => this.syncGrants() },
      );
      this.listener = listener;
      await listener.start().catch((error: unknown) => {
        throw storeUnavailable(classifyFailure(error));
      });
      this.phase = 'started';
      this.instance.attach('admission', () => this.listener?.connected === true);
      // rows under this id were left by an earlier life of this instance (a restart with a fixed id)
      await this.decideNow({ poll: true, retireAll: true });
      this.armPoll();
    } catch (error) {
      this.phase = 'new';
      await this.listener?.close();
      this.listener = undefined;
      throw error;
    }
  }

  private armPoll(): void {
    this.pollTimer = this.clock.setTimer(() => {
      this.pollTimer = undefined;
      this.track(this.poll());
    }, this.options.reapIntervalMs);
  }

  /** The periodic decision: reaps dead instances, dispatches, and checks this instance's rows. */
  private async poll(): Promise<void> {
    try {
      await this.decideNow({ poll: true });
    } catch {
      // the store is unreachable: the next poll tries again, and nothing is admitted meanwhile
    } finally {
      if (this.phase === 'started') this.armPoll();
    }
  }

  /** Deletes the retiring rows in decisions, retried with backoff until they land or the instance stops. */
  private retire(ref: string, lowered: Lowered | null = null): void {
    this.retiring.set(ref, lowered);
    if (this.phase === 'started') this.retirer.trigger();
  }

  private async retireAll(): Promise<void> {
    const policy = { attempts: Infinity, delayMs: RETIRE_BACKOFF, retryable: () => this.phase === 'started', signal: this.stopping.signal };
    while (this.retiring.size > 0 && this.phase === 'started') await retry(() => this.decideNow({}), policy, this.clock);
  }

  private syncGrants(): void {
    if (this.phase === 'started') this.grantReader.trigger();
  }

  private async readGrants(): Promise<void> {
    const refs = this.refsIn(['queued', 'pending']);
    if (refs.length === 0 || this.phase !== 'started') return;
    // a failure is left to the periodic poll, which reads the grants too
    const rows = await runStatement(this.pool, SELECT_HELD, [this.instanceId, refs], storeUnavailable);
    this.operate(() => rows.forEach((row) => this.onGranted(row.request_id as string)));
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  // ---- decisions ---------------------------------------------------------------------------

  /**
   * One decision transaction carrying the pending deletes and looking up this instance's waiting
   * requests (and, on a poll, its permits); its outcome and `after` are applied in one operation.
   */
  private decideNow<T>(plan: DecisionPlan, after?: (outcome: DecisionOutcome) => T): Promise<T | undefined> {
    const decided = this.decisions.then(() => this.decideOnce(plan, after));
    this.decisions = decided.catch(() => undefined);
    return decided;
  }

  private async decideOnce<T>(plan: DecisionPlan, after?: (outcome: DecisionOutcome) => T): Promise<T | undefined> {
    const retire = [...this.retiring.keys()];
    const lookUp = [...this.requests.values()].filter((entry) => entry.state !== 'active' || plan.poll === true);
    const states = lookUp.map((entry) => entry.state);
    const submit = plan.submit;
    const outcome = await this.track(
      runDecision(this.pool, {
        instanceId: this.instanceId,
        config: this.config,
        retire,
        ...(plan.retireAll ? { retireAll: true } : {}),
        lookUp: lookUp.filter((entry) => entry !== submit).map((entry) => entry.ref),
        submit: submit && { ref: submit.ref, permitId: submit.permitId, agentId: submit.agentId, overflow: submit.overflow, deadline: submit.deadline },
        now: () => this.now(),
      }),
    );
    for (const ref of retire) this.retiring.delete(ref);
    return this.operate(() => {
      this.applyDecision(outcome, lookUp, states, submit);
      return after?.(outcome);
    });
  }

  private applyDecision(outcome: DecisionOutcome, lookUp: readonly ClusterRequest[], states: readonly ClusterRequestState[], submit: ClusterRequest | undefined): void {
    // removals made here while the decision ran are not in its counts yet
    const removedSince = [...this.retiring.values()].filter((lowered): lowered is Lowered => lowered !== null);
    for (const grant of outcome.grants) {
      if (grant.instanceId !== this.instanceId) continue;
      this.view.readTotals(grant.activeAfter, grant.queuedAfter, removedSince);
      this.onGranted(grant.requestId);
    }
    this.view.read(outcome.counts);
    for (const lowered of removedSince) this.view.lower(lowered.agentId, lowered.what);
    lookUp.forEach((entry, i) => {
      // a request that moved on while the decision ran is judged by its newer state
      if (entry === submit || entry.state !== states[i]) return;
      const held = outcome.held.has(entry.ref);
      if (entry.state === 'pending') entry.grantedEarly ||= held;
      else if (entry.state === 'queued' && held) this.grantQueued(entry);
      // its row is gone although nobody here removed it: the cluster took this instance for dead and reaped it
      else if (entry.state === 'queued' && !outcome.waiting.has(entry.ref)) this.removeQueued(entry, new AdmissionError('admission_store_unavailable'), 'owner_down');
      else if (entry.state === 'active' && !held) this.revoke(entry, 'owner_down');
    });
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
    if (decision.kind === 'granted') {
      this.activate(entry, 0);
      const result = Object.freeze({ requestRef: entry.ref, status: 'granted' as const, permit: entry.permit as Permit });
      if (entry.owner?.aborted || this.phase === 'stopped') this.revoke(entry, 'owner_down');
      this.checkDrained();
      return result;
    }
    if (decision.kind === 'queued') {
      entry.state = 'queued';
      entry.seq = decision.seq;
      this.localQueued++;
      if (entry.deadline !== Infinity) this.deadlines.push(entry);
      this.decide('queued', entry.agentId, 0);
      const result = Object.freeze({ requestRef: entry.ref, status: 'queued' as const, deadline: entry.deadline === Infinity ? ('infinity' as const) : entry.deadline });
      // what happened here while the decision ran: an abort, a drain, a grant, the deadline
      if (entry.owner?.aborted || entry.signal?.aborted) this.abortQueued(entry);
      else if (this.draining) this.removeQueued(entry, new AdmissionError('deployment_draining'), 'deployment_draining');
      else if (entry.grantedEarly) this.grantQueued(entry);
      else this.purge(this.now());
      this.checkDrained();
      return result;
    }
    const [error, outcome] = refusalOf(decision, this.config.maxQueue);
    this.finish(entry, error);
    this.decide(outcome, entry.agentId, 0);
    this.checkDrained();
    throw error;
  }

  /** The submit decision failed: nothing of it was committed, unless the failure hid a commit, hence the delete. */
  private failPending(entry: ClusterRequest, error: unknown): void {
    this.pending--;
    this.finish(entry, error);
    this.retire(entry.ref);
    this.checkDrained();
  }

  // ---- local transitions -------------------------------------------------------------------

  private admit(agentId: unknown, opts: unknown): ClusterRequest {
    if (this.draining) throw new AdmissionError('deployment_draining');
    if (!isValidId(agentId)) throw invalidOptions('agentId');
    const now = this.now();
    const request = parseRequestOptions(opts as AdmissionRequestOptions | undefined, this.config, now);
    if (request.signal?.aborted || request.owner?.aborted) {
      this.decide(request.owner?.aborted ? 'owner_down' : 'requester_down', agentId, 0);
      throw request.signal?.aborted ? request.signal.reason : new AdmissionError('owner_down');
    }
    if (this.phase !== 'started' || !this.instance.live) throw new AdmissionError('admission_store_unavailable');
    this.purge(now);
    const entry = new ClusterRequest(this, randomId('request-'), randomId('permit-'), agentId, request.overflow, request.deadline, now, request.owner, request.signal);
    this.requests.set(entry.ref, entry);
    this.pending++;
    if (entry.owner) this.listenToOwner(entry);
    if (entry.signal && entry.signal !== entry.owner) {
      entry.signalListener = () => this.onAbort(entry);
      entry.signal.addEventListener('abort', entry.signalListener, { once: true });
    }
    return entry;
  }

  private onGranted(ref: string): void {
    const entry = this.requests.get(ref);
    if (entry?.state === 'queued') this.grantQueued(entry);
    else if (entry?.state === 'pending') entry.grantedEarly = true;
    // the waiter went before the grant arrived: give the permit back
    else if (entry === undefined) this.retire(ref);
  }

  private grantQueued(entry: ClusterRequest): void {
    if (entry.heapIndex >= 0) this.deadlines.remove(entry);
    this.localQueued--;
    this.activate(entry, this.now() - entry.submittedAt);
  }

  private activate(entry: ClusterRequest, waitMs: number): void {
    entry.state = 'active';
    this.localActive++;
    const permit = new IssuedPermit(entry.permitId, entry.agentId, entry.ref, this.releaseIgnoringResult, entry);
    entry.permit = permit;
    if (entry.signalListener) {
      (entry.signal as AbortSignal).removeEventListener('abort', entry.signalListener);
      entry.signalListener = undefined;
    }
    const waiters = entry.waiters;
    if (waiters) {
      entry.waiters = null;
      this.effects.push(() => waiters.forEach((waiter) => waiter.resolve(permit)));
    }
    this.decide('granted', entry.agentId, waitMs);
  }

  /** The one revoke path of release, cancel of an active request, owner abort and a reaped permit. */
  private revoke(entry: ClusterRequest, outcome: RevocationOutcome): boolean {
    if (entry.state !== 'active') return false;
    entry.state = 'done';
    this.localActive--;
    this.requests.delete(entry.ref);
    this.unwatch(entry);
    const permit = entry.permit as IssuedPermit;
    if (isPermitObserved(permit)) this.effects.push(() => revokePermit(permit, outcome));
    else revokePermit(permit, outcome);
    this.view.lower(entry.agentId, 'active');
    this.decide(outcome, entry.agentId, this.now() - entry.submittedAt);
    this.retire(entry.ref, { agentId: entry.agentId, what: 'active' });
    this.checkDrained();
    return true;
  }

  private removeQueued(entry: ClusterRequest, reason: unknown, outcome: AdmissionOutcome): void {
    if (entry.heapIndex >= 0) this.deadlines.remove(entry);
    this.localQueued--;
    this.recentFailures.set(entry.ref, reason);
    if (this.recentFailures.size > RECENT_FAILURES) this.recentFailures.delete(this.recentFailures.keys().next().value as string);
    this.finish(entry, reason);
    this.view.lower(entry.agentId, 'queued');
    this.decide(outcome, entry.agentId, this.now() - entry.submittedAt);
    this.retire(entry.ref, { agentId: entry.agentId, what: 'queued' });
  }

  /** Spec 01 §4: waiters get `signal.reason` if it aborted, else `owner_down`; the outcome names the owner if it aborted. */
  private abortQueued(entry: ClusterRequest): void {
    const reason = entry.signal?.aborted ? entry.signal.reason : new AdmissionError('owner_down');
    this.removeQueued(entry, reason, entry.owner?.aborted ? 'owner_down' : 'requester_down');
  }

  /** Ends a request that holds no permit and fails its waiters with `reason`. */
  private finish(entry: ClusterRequest, reason: unknown): void {
    entry.state = 'done';
    this.unwatch(entry);
    this.requests.delete(entry.ref);
    const waiters = entry.waiters;
    if (waiters) {
      entry.waiters = null;
      for (const waiter of waiters) if (waiter.promise) handled(waiter.promise);
      this.effects.push(() => waiters.forEach((waiter) => waiter.reject(reason)));
    }
  }

  private purge(now: number): void {
    for (let entry = this.deadlines.peek(); entry && entry.deadline <= now; entry = this.deadlines.peek()) {
      this.removeQueued(entry, new AdmissionError('queue_deadline_exceeded'), 'expired');
    }
  }

  private stopAdmitting(): void {
    if (this.draining) return;
    this.draining = true;
    this.drainStartedAt = this.clock.wallNow();
    this.purge(this.now());
    const queued = [...this.requests.values()].filter((entry) => entry.state === 'queued').sort((a, b) => a.seq - b.seq);
    for (const entry of queued) this.removeQueued(entry, new AdmissionError('deployment_draining'), 'deployment_draining');
  }

  private onAbort(entry: ClusterRequest): void {
    this.operate(() => {
      // while the submit decision runs, applySubmit looks at the signals once it is known
      if (entry.state === 'queued') this.abortQueued(entry);
      else if (entry.state === 'active' && entry.owner?.aborted) this.revoke(entry, 'owner_down');
    });
  }

  private checkDrained(): void {
    if (this.localActive > 0 || this.pending > 0 || !this.drainWaiters.waiting) return;
    const waiters = this.drainWaiters.take();
    const status = this.snapshot();
    this.effects.push(() => waiters.forEach((waiter) => waiter(status)));
  }

  // ---- listeners, waiters, effects ---------------------------------------------------------

  private listenToOwner(entry: ClusterRequest): void {
    entry.ownerListener = () => this.onAbort(entry);
    (entry.owner as AbortSignal).addEventListener('abort', entry.ownerListener, { once: true });
  }

  private unwatch(entry: ClusterRequest): void {
    if (entry.ownerListener) (entry.owner as AbortSignal).removeEventListener('abort', entry.ownerListener);
    if (entry.signalListener) (entry.signal as AbortSignal).removeEventListener('abort', entry.signalListener);
    entry.ownerListener = undefined;
    entry.signalListener = undefined;
  }

  private decide(outcome: AdmissionOutcome, agentId: string, waitMs: number): void {
    const events = this.events;
    if (events === undefined) return;
    const payload = decisionPayload(outcome, agentId, waitMs, this.view.active, this.view.queued);
    this.effects.push(() => emitSafely(events, TelemetryEvents.admissionDecision, payload));
  }

  /** Runs one operation, then arms the expiry timer and performs the collected side effects. */
  private operate<T>(operation: () => T): T {
    try {
      return operation();
    } finally {
      this.expiryTimer.arm(this.deadlines.peek()?.deadline ?? Infinity);
      this.effects.flush();
    }
  }

  private refsIn(states: readonly ClusterRequestState[]): string[] {
    const refs: string[] = [];
    for (const entry of this.requests.values()) if (states.includes(entry.state)) refs.push(entry.ref);
    return refs;
  }

  private snapshot(): ClusterAdmissionStatus {
    const { agentLimits, defaultAgentLimit } = this.config;
    const agents = this.view.perAgent((id) => agentLimits.get(id) ?? defaultAgentLimit);
    const record = admissionStatusRecord({ draining: this.draining, drainStartedAt: this.drainStartedAt, active: this.view.active, queued: this.view.queued }, this.config, agents);
    return Object.freeze({ ...record, instances_live: this.view.instancesLive, instance: Object.freeze({ active: this.localActive, queued: this.localQueued }) });
  }

  private now(): number {
    return this.clock.monotonicNow();
  }

  private readonly releaseIgnoringResult = (permit: Permit): void => {
    this.release(permit);
  };
}

/** What one decision of this instance does besides its pending deletes. */
interface DecisionPlan {
  readonly submit?: ClusterRequest;
  /** Also check this instance's permits. */
  readonly poll?: boolean;
  /** Delete every row of this instance id. */
  readonly retireAll?: boolean;
}

/** A removal already subtracted from the view, to subtract again from a reading that predates it. */
interface Lowered {
  readonly agentId: string;
  readonly what: 'active' | 'queued';
}

/** The error a submit throws and the outcome it reports for a refusal of the cluster. */
function refusalOf(decision: SubmitDecision, maxQueue: number): [AdmissionError, AdmissionOutcome] {
  switch (decision.kind) {
    case 'rejected':
      return [new AdmissionError('concurrency_limit_reached', { limit_scope: decision.scope }), 'rejected'];
    case 'queue_full':
      return [new AdmissionError('admission_queue_full', { max_queue: maxQueue }), 'queue_full'];
    default:
      return [new AdmissionError('queue_deadline_exceeded'), 'expired'];
  }
}

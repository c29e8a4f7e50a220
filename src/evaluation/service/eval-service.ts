import { inspect } from 'node:util';
import { systemClock, type Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { EvalServiceError } from '../eval.errors';
import type {
  EvalBaselineRecord,
  EvalBaselineWithResult,
  EvalJobRecord,
  EvalPage,
  EvalPageOptions,
  EvalPruneOptions,
  EvalPruneReport,
  EvalResult,
  EvalScope,
  EvalSetRevision,
  EvalSetSummary,
  EvalStore,
  PublicEvalJob,
} from '../eval.types';
import { assertKnownAgent, type EvalRunnerRegistry } from '../executor/local-eval-executor';
import type { EvalRegressionReport } from '../executor/regression-report';
import { RequestPreparationPool } from '../preparation/request-preparation-pool';
import { checkEvalScope, checkEvalJobId } from '../eval-scope';
import { completedResult } from './completed-result';
import { evalCapabilities, type EvalCapabilities } from './eval-capabilities';
import { compareWithBaseline, type EvalCompareOptions } from './eval-compare';
import { emitJobTransition } from './eval-job-telemetry';
import { checkEvalStore } from './eval-store-check';
import { resolveEvalServiceOptions, workerExecutor, type EvalServiceOptions, type ResolvedEvalServiceOptions } from './eval-service-options';
import type { EvalServiceDeps, EvalServiceLogger, EvalServiceState } from './eval-service.types';
import { EvalOwnershipSession } from './eval-ownership-session';
import { EvalTaskScheduler } from './eval-task-scheduler';
import { publicEvalJob } from './public-eval-job';

export type { EvalCapabilities } from './eval-capabilities';
export type { EvalCompareOptions } from './eval-compare';
export type { EvalServiceDeps, EvalServiceLogger, EvalServiceState } from './eval-service.types';

/**
 * The evaluation service (spec 05): jobs that run an eval set through the Runner in the background,
 * bounded by active and queued work, every lifecycle change persisted by compare-and-set, one owner
 * per store identity, hostile requests prepared off the event loop, no work replayed after a
 * restart, and a stop rather than a lost terminal outcome.
 *
 * @example
 * const service = new EvalService({ store: new PostgresEvalStore(dataSource), registry }, { maxConcurrency: 2 });
 * await service.start();
 * const job = await service.submit({ app: 'billing' }, { set, agent: 'helper', metrics: [{ name: 'tool_trajectory' }] });
 */
export class EvalService {
  readonly #options: ResolvedEvalServiceOptions;
  readonly #store: EvalStore;
  readonly #registry: EvalRunnerRegistry | undefined;
  readonly #clock: Clock;
  readonly #events: TelemetrySink | undefined;
  readonly #logger: EvalServiceLogger | undefined;
  readonly #pool: RequestPreparationPool;
  readonly #scheduler: EvalTaskScheduler;
  readonly #ownership: EvalOwnershipSession;
  #state: EvalServiceState = 'created';
  #stopReason: string | null = null;
  #recovered = 0;
  #pendingSubmissions = 0;

  /** Validates the options and the store (`invalid_eval_store_module`); nothing is opened before `start()`. */
  constructor(deps: EvalServiceDeps, options?: EvalServiceOptions) {
    this.#options = resolveEvalServiceOptions(options, 'fail_fast');
    this.#store = checkEvalStore(deps?.store);
    this.#registry = deps.registry;
    this.#clock = deps.clock ?? systemClock;
    this.#events = deps.events;
    this.#logger = deps.logger;
    const { executor, config } = workerExecutor(this.#options.worker, this.#registry, this.#clock);
    this.#pool = new RequestPreparationPool(this.#options.preparation, { clock: this.#clock, ...(deps.preparationWorkerFile ? { filename: deps.preparationWorkerFile } : {}) });
    this.#scheduler = new EvalTaskScheduler({
      store: this.#store,
      executor,
      executorConfig: config,
      clock: this.#clock,
      limits: this.#options,
      isRunning: () => this.#state === 'running',
      failStop: (reason) => this.#failStop(reason),
      transitioned: (before, after) => emitJobTransition(this.#events, before, after, this.#scheduler),
    });
    this.#ownership = new EvalOwnershipSession(this.#store, this.#clock, {
      takeOver: () => this.#takeOver(),
      failed: (reason) => this.#failStop(reason),
      lost: () => this.#failStop('eval_store_ownership_lost'),
    });
  }

  /** The current state. */
  get state(): EvalServiceState {
    return this.#state;
  }

  /** Why the service stopped on a fault (spec 05 §6.1), else `null`. */
  get stopReason(): string | null {
    return this.#stopReason;
  }

  /**
   * Start-up (spec 05 §3): ownership before anything else, then the identity recheck, the schema,
   * recovery, the preparation pool, `running`. Owned elsewhere: `eval_store_already_owned`
   * (`ownership: 'fail_fast'`) or `standby`. Any failure releases what was taken and rejects; the
   * instance is then stopped for good (`eval_service_unavailable` on a second `start`).
   */
  async start(): Promise<void> {
    // a stopped service is final: its replacement is a new instance
    if (this.#state === 'stopped') this.#assertServing();
    if (this.#state !== 'created') return;
    this.#state = 'starting';
    try {
      const won = await this.#ownership.open();
      if (!won) {
        if (this.#options.ownership === 'fail_fast') throw new EvalServiceError('eval_store_already_owned');
        this.#state = 'standby';
        this.#ownership.retryInStandby();
        return;
      }
      await this.#takeOver();
    } catch (error) {
      this.#stopReason = EvalServiceError.isEvalServiceError(error) ? error.code : 'eval_store_unavailable';
      this.#state = 'stopped';
      await this.#release();
      throw EvalServiceError.isEvalServiceError(error) ? error : new EvalServiceError('eval_store_unavailable');
    }
  }

  /** Stop (spec 05 §3): running tasks are aborted without writing, rows stay for the next start, the lock goes last. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return this.#release();
    this.#state = 'stopped';
    await this.#release();
  }

  /** Submits a job (spec 05 §4): prepared off the event loop, admitted, created atomically, started or queued. */
  submit(scope: EvalScope, request: unknown): Promise<PublicEvalJob> {
    return this.#call(async () => {
      const checked = checkEvalScope(scope);
      this.#pendingSubmissions += 1;
      try {
        const prepared = await this.#pool.prepare(request, { taskTimeoutMs: this.#options.taskTimeoutMs });
        assertKnownAgent(this.#registry, prepared.agent);
        this.#assertServing();
        const reservation = this.#scheduler.reserve(prepared.request_bytes);
        let record: EvalJobRecord;
        try {
          record = await this.#store.createEvaluation(checked, prepared);
        } catch (error) {
          this.#scheduler.release(reservation, prepared.request_bytes);
          throw error;
        }
        const execution = { job_id: record.job_id, scope: checked, agent: prepared.agent, set: prepared.set, metrics: prepared.metrics, options: prepared.options };
        return await this.#scheduler.admit(reservation, record, execution);
      } finally {
        this.#pendingSubmissions -= 1;
      }
    });
  }

  /** The public job; an unknown id or another app's job is `not_found`. */
  status(scope: EvalScope, jobId: string): Promise<PublicEvalJob> {
    return this.#call(async () => publicEvalJob(await this.#store.getJob(checkEvalScope(scope), checkEvalJobId(jobId))));
  }

  /** The result of a completed job; `result_not_ready` before, `evaluation_job_terminal` for another end. */
  result(scope: EvalScope, jobId: string): Promise<EvalResult> {
    return this.#call(async () => completedResult(await this.#store.getResult(checkEvalScope(scope), checkEvalJobId(jobId))));
  }

  /** Cancels a queued or running job (spec 05 §6); a terminal one is `already_terminal`. */
  cancel(scope: EvalScope, jobId: string): Promise<PublicEvalJob> {
    return this.#call(() => this.#scheduler.cancel(checkEvalScope(scope), checkEvalJobId(jobId)));
  }

  /** The app's jobs, newest last, keyset-paged. */
  listJobs(scope: EvalScope, options?: EvalPageOptions): Promise<EvalPage<PublicEvalJob>> {
    return this.#call(async () => {
      const page = await this.#store.listJobs(checkEvalScope(scope), options);
      return Object.freeze({ ...page, items: Object.freeze(page.items.map(publicEvalJob)) });
    });
  }

  /** One stored set revision. */
  getSet(scope: EvalScope, evalSetId: string, version: string): Promise<EvalSetRevision> {
    return this.#call(() => this.#store.getSet(checkEvalScope(scope), evalSetId, version));
  }

  /** The app's set revisions, keyset-paged by `(eval_set_id, eval_set_version)`. */
  listSets(scope: EvalScope, options?: EvalPageOptions): Promise<EvalPage<EvalSetSummary>> {
    return this.#call(() => this.#store.listSets(checkEvalScope(scope), options));
  }

  /** Names a completed job of the set as a baseline (upsert). */
  putBaseline(scope: EvalScope, baseline: { readonly evalSetId: string; readonly name: string; readonly jobId: string }): Promise<EvalBaselineRecord> {
    return this.#call(() => this.#store.putBaseline(checkEvalScope(scope), baseline));
  }

  /** The baseline record with its job's result. */
  getBaseline(scope: EvalScope, evalSetId: string, name: string): Promise<EvalBaselineWithResult> {
    return this.#call(() => this.#store.getBaseline(checkEvalScope(scope), evalSetId, name));
  }

  /**
   * The regression gate: the completed job `jobId` against the named baseline of the same set, as a
   * content-free report (per metric baseline, candidate, delta; per case the metrics that passed
   * before and fail now; `regressed`).
   */
  compare(scope: EvalScope, jobId: string, options: EvalCompareOptions): Promise<EvalRegressionReport> {
    return this.#call(() => compareWithBaseline(this.#store, checkEvalScope(scope), jobId, options));
  }

  /** Deletes old rows in one bounded transaction (spec 05 §6). */
  prune(options: EvalPruneOptions): Promise<EvalPruneReport> {
    return this.#call(() => this.#store.prune(options));
  }

  /** The capabilities record (spec 05 §9), from memory. */
  capabilities(): EvalCapabilities {
    const { activeJobs, queuedJobs, queuedBytes } = this.#scheduler;
    const counts = { activeJobs, queuedJobs, queuedBytes, pendingSubmissions: this.#pendingSubmissions, recoveredJobs: this.#recovered };
    return evalCapabilities({ state: this.#state, identitySource: this.#ownership.identitySource, options: this.#options, ...counts });
  }

  /** Readiness: `running` with the ownership locks held and their connection answering within `timeoutMs`. */
  async isHealthy(timeoutMs: number): Promise<boolean> {
    return this.#state === 'running' && (await this.#ownership.ping(timeoutMs));
  }

  /** Liveness: false only once the service has stopped. */
  isLive(): boolean {
    return this.#state !== 'stopped';
  }

  toJSON(): EvalCapabilities {
    return this.capabilities();
  }

  [inspect.custom](): string {
    return `EvalService ${inspect(this.capabilities())}`;
  }

  async #takeOver(): Promise<void> {
    await this.#ownership.recheckIdentity();
    await this.#ownership.assertSchema();
    try {
      this.#recovered = await this.#store.recover();
    } catch {
      throw new EvalServiceError('eval_store_recovery_failed');
    }
    await this.#pool.start();
    this.#state = 'running';
  }

  #failStop(reason: string): void {
    if (this.#state === 'stopped') return;
    this.#stopReason = reason;
    this.#state = 'stopped';
    try {
      this.#logger?.error(`evaluation service stopped: ${reason}; liveness is down until the app restarts, and that start fails the unfinished jobs`);
    } catch {
      // a broken logger must not keep the service from stopping
    }
    void this.#release();
  }

  async #release(): Promise<void> {
    this.#scheduler.abandonAll();
    await this.#pool.destroy().catch(() => undefined);
    await this.#ownership.close();
  }

  #assertServing(): void {
    if (this.#state === 'running') return;
    if (this.#state === 'stopped' && this.#stopReason !== null) throw new EvalServiceError('eval_service_unavailable', { reason: this.#stopReason });
    throw new EvalServiceError('eval_service_unavailable', { state: this.#state });
  }

  /** Every public call: refused unless `running`, bounded by `callTimeoutMs` (`timeout`). */
  #call<T>(work: () => Promise<T>): Promise<T> {
    try {
      this.#assertServing();
    } catch (error) {
      return Promise.reject(error);
    }
    return within(Promise.resolve().then(work), this.#options.callTimeoutMs, this.#clock, () => new EvalServiceError('timeout'));
  }
}

import { inspect } from 'node:util';
import type { JsonValue } from '../../json/json.types';
import { systemClock, type Clock } from '../../shared/time/clock';
import { readStrictOptions } from '../../shared/options/strict-options';
import { within } from '../../shared/time/timeout';
import { emitSafely, type TelemetrySink } from '../../telemetry/telemetry-sink';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { EvalServiceError } from '../eval.errors';
import type {
  EvalBaselineRecord,
  EvalBaselineWithResult,
  EvalExecutor,
  EvalIdentitySource,
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
import { LocalEvalExecutor, type EvalRunnerRegistry } from '../executor/local-eval-executor';
import { compareResults, type EvalRegressionReport } from '../executor/regression-report';
import { RequestPreparationPool } from '../preparation/request-preparation-pool';
import { checkEvalScope, checkEvalJobId } from '../eval-scope';
import { checkEvalStore } from './eval-store-check';
import { resolveEvalServiceOptions, type EvalServiceOptions, type ResolvedEvalServiceOptions } from './eval-service-options';
import { EvalOwnershipSession } from './eval-ownership-session';
import { EvalTaskScheduler } from './eval-task-scheduler';
import { publicEvalJob } from './public-eval-job';

/** Lifecycle of a service (spec 05 §3): `stopped` is final. */
export type EvalServiceState = 'created' | 'starting' | 'standby' | 'running' | 'stopped';

/** What an {@link EvalService} is built on. */
export interface EvalServiceDeps {
  /** The store it owns (a `PostgresEvalStore`, or a wrapper delegating to one). */
  readonly store: EvalStore;
  /** The runners jobs name (`RunRegistry`); needed by the `'local'` worker and for `unknown_eval_agent`. */
  readonly registry?: EvalRunnerRegistry;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Telemetry sink (`EventEmitter2` fits). @default none */
  readonly events?: TelemetrySink;
  /** The preparation worker script. @default the package's compiled worker */
  readonly preparationWorkerFile?: string;
  /** Where a stop on a fault is reported, one content-free line (Nest's `Logger` fits). @default none */
  readonly logger?: EvalServiceLogger;
}

/** A sink for the service's one line about a stop on a fault. */
export interface EvalServiceLogger {
  error(message: string): void;
}

/** The service's self-description (spec 05 §9): from memory, content-free. */
export interface EvalCapabilities {
  readonly schema_version: 1;
  readonly contract_version: 1;
  readonly status: EvalServiceState;
  readonly identity_source: EvalIdentitySource | null;
  readonly max_concurrency: number;
  readonly max_queue: number;
  readonly max_queue_bytes: number;
  readonly active_jobs: number;
  readonly queued_jobs: number;
  readonly queued_bytes: number;
  readonly pending_submissions: number;
  readonly recovered_jobs: number;
  readonly worker: 'local' | 'custom';
  readonly store: { readonly persistence: 'postgres'; readonly tables: 5 };
}

/** Options of {@link EvalService.compare}. */
export interface EvalCompareOptions {
  readonly evalSetId: string;
  /** Name of the baseline of that set. */
  readonly baseline: string;
  /** How far a metric may drop below the baseline before it counts as a regression, 0..1. @default 0 */
  readonly tolerance?: number;
}

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
    const worker = this.#options.worker;
    let executor: EvalExecutor;
    if (worker === 'local') {
      if (this.#registry === undefined || typeof this.#registry.getRunner !== 'function') throw new EvalServiceError('invalid_eval_worker');
      executor = new LocalEvalExecutor(this.#registry, { clock: this.#clock });
    } else executor = worker.executor;
    this.#pool = new RequestPreparationPool(this.#options.preparation, { clock: this.#clock, ...(deps.preparationWorkerFile ? { filename: deps.preparationWorkerFile } : {}) });
    const options_ = this.#options;
    this.#scheduler = new EvalTaskScheduler({
      store: this.#store,
      executor,
      executorConfig: worker === 'local' ? undefined : (worker.config as JsonValue | undefined),
      clock: this.#clock,
      maxConcurrency: options_.maxConcurrency,
      maxQueue: options_.maxQueue,
      maxQueueBytes: options_.maxQueueBytes,
      taskTimeoutMs: options_.taskTimeoutMs,
      taskRetentionMs: options_.taskRetentionMs,
      isRunning: () => this.#state === 'running',
      failStop: (reason) => this.#failStop(reason),
      transitioned: (before, after) => this.#transitioned(before, after),
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
        this.#checkAgent(prepared.agent);
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
    return this.#call(async () => {
      const checked = checkEvalScope(scope);
      const { evalSetId, baseline, tolerance } = readCompareOptions(options);
      const base = await this.#store.getBaseline(checked, evalSetId, baseline);
      const candidate = await this.#store.getResult(checked, checkEvalJobId(jobId));
      if (candidate.job.eval_set_id !== evalSetId) throw new EvalServiceError('not_found');
      return compareResults({ job_id: base.job_id, result: base.result }, { job_id: jobId, result: completedResult(candidate) }, { tolerance });
    });
  }

  /** Deletes old rows in one bounded transaction (spec 05 §6). */
  prune(options: EvalPruneOptions): Promise<EvalPruneReport> {
    return this.#call(() => this.#store.prune(options));
  }

  /** The capabilities record (spec 05 §9), from memory. */
  capabilities(): EvalCapabilities {
    const o = this.#options;
    return Object.freeze({
      schema_version: 1,
      contract_version: 1,
      status: this.#state,
      identity_source: this.#ownership.identitySource,
      max_concurrency: o.maxConcurrency,
      max_queue: o.maxQueue,
      max_queue_bytes: o.maxQueueBytes,
      active_jobs: this.#scheduler.activeJobs,
      queued_jobs: this.#scheduler.queuedJobs,
      queued_bytes: this.#scheduler.queuedBytes,
      pending_submissions: this.#pendingSubmissions,
      recovered_jobs: this.#recovered,
      worker: o.worker === 'local' ? 'local' : 'custom',
      store: Object.freeze({ persistence: 'postgres', tables: 5 }),
    });
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

  #checkAgent(agent: string): void {
    if (this.#registry === undefined) return;
    try {
      this.#registry.getRunner(agent);
    } catch {
      throw new EvalServiceError('unknown_eval_agent');
    }
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

  #transitioned(before: EvalJobRecord, after: EvalJobRecord): void {
    if (this.#events === undefined) return;
    emitSafely(this.#events, TelemetryEvents.evaluationJob, {
      from: before.phase,
      to: after.phase,
      revision: after.revision,
      reason: after.reason,
      duration_ms: Math.max(0, after.updated_at_ms - before.updated_at_ms),
      active_jobs: this.#scheduler.activeJobs,
      queued_jobs: this.#scheduler.queuedJobs,
    });
  }
}

function completedResult(read: { readonly job: EvalJobRecord; readonly result: EvalResult | null }): EvalResult {
  const { job, result } = read;
  if (job.phase === 'completed' && result !== null) return result;
  if (job.phase === 'queued' || job.phase === 'running') throw new EvalServiceError('result_not_ready');
  throw new EvalServiceError('evaluation_job_terminal', { phase: job.phase, reason: job.reason });
}

const COMPARE_RULES = {
  evalSetId: (value: unknown) => typeof value === 'string' && value.length > 0,
  baseline: (value: unknown) => typeof value === 'string' && value.length > 0,
  tolerance: (value: unknown) => typeof value === 'number' && value >= 0 && value <= 1,
};

/** The options of `compare`; the store decides whether the set and the baseline exist (`not_found`). */
function readCompareOptions(options: unknown): { evalSetId: string; baseline: string; tolerance: number } {
  const values = readStrictOptions(options, COMPARE_RULES, 'options', {
    unknownKeys: (keys) => new EvalServiceError('invalid_eval_compare_options', { keys }),
    invalid: (option) => new EvalServiceError('invalid_eval_compare_options', { option }),
  });
  if (values.evalSetId === undefined) throw new EvalServiceError('invalid_eval_compare_options', { option: 'evalSetId' });
  if (values.baseline === undefined) throw new EvalServiceError('invalid_eval_compare_options', { option: 'baseline' });
  return { evalSetId: values.evalSetId as string, baseline: values.baseline as string, tolerance: (values.tolerance as number | undefined) ?? 0 };
}

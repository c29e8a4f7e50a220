import { inspect } from 'node:util';
import { systemClock, type Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';
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
import { checkEvalScope, checkEvalJobId } from '../eval-scope';
import { completedResult } from './completed-result';
import { evalCapabilities, type EvalCapabilities } from './eval-capabilities';
import { compareWithBaseline, type EvalCompareOptions } from './eval-compare';
import { checkEvalStore } from './eval-store-check';
import { resolveEvalServiceOptions, type EvalServiceOptions, type ResolvedEvalServiceOptions } from './eval-service-options';
import type { EvalServiceDeps, EvalServiceState } from './eval-service.types';
import { EvalGeneration, failCreatedAfterRestart } from './eval-generation';
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
  readonly #deps: EvalServiceDeps;
  #generation!: EvalGeneration;
  #state: EvalServiceState = 'created';
  #stopReason: string | null = null;
  #stoppedForGood = false;
  #recovered = 0;
  #pendingSubmissions = 0;

  /** Validates the options and the store (`invalid_eval_store_module`); nothing is opened before `start()`. */
  constructor(deps: EvalServiceDeps, options?: EvalServiceOptions) {
    this.#options = resolveEvalServiceOptions(options, 'fail_fast');
    this.#store = checkEvalStore(deps?.store);
    this.#registry = deps.registry;
    this.#clock = deps.clock ?? systemClock;
    this.#deps = deps;
    this.#newGeneration();
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
   * instance is then stopped (`eval_service_unavailable` on a second `start`; see `restart`).
   */
  async start(): Promise<void> {
    // a stopped service comes back through restart(), never through a second start()
    if (this.#state === 'stopped') this.#assertServing();
    if (this.#state !== 'created') return;
    this.#state = 'starting';
    const generation = this.#generation;
    try {
      const won = await generation.ownership.open();
      // stop() while the connection opened (an app closing during a restart) is final
      if (this.#stoppedForGood) throw new EvalServiceError('eval_service_unavailable', { state: 'stopped' });
      if (!won) {
        if (this.#options.ownership === 'fail_fast') throw new EvalServiceError('eval_store_already_owned');
        this.#state = 'standby';
        generation.ownership.retryInStandby();
        return;
      }
      await this.#takeOver(generation);
    } catch (error) {
      const code = EvalServiceError.isEvalServiceError(error) ? error.code : 'eval_store_unavailable';
      if (generation === this.#generation && this.state !== 'stopped') {
        this.#stopReason = code;
        this.#state = 'stopped';
      }
      await generation.release();
      throw EvalServiceError.isEvalServiceError(error) ? error : new EvalServiceError('eval_store_unavailable');
    }
  }

  /**
   * A new generation after a stop on a fault or a failed start (spec 05 §6.1), started as at app start
   * (ownership, recovery of the rows left `queued`/`running`, or `standby`); rejects with the failing
   * step's code. `EvaluationModule` calls it with backoff. A no-op after `stop()` or while not stopped.
   */
  async restart(): Promise<void> {
    if (this.#stoppedForGood || this.#state !== 'stopped') return;
    this.#newGeneration();
    this.#stopReason = null;
    this.#state = 'created';
    await this.start();
  }

  /** Stop (spec 05 §3): running tasks are aborted without writing, rows stay for the next start, the lock goes last. Final. */
  async stop(): Promise<void> {
    this.#stoppedForGood = true;
    this.#state = 'stopped';
    await this.#generation.release();
  }

  /** Submits a job (spec 05 §4): prepared off the event loop, admitted, created atomically, started or queued. */
  submit(scope: EvalScope, request: unknown): Promise<PublicEvalJob> {
    return this.#call(async () => {
      const checked = checkEvalScope(scope);
      this.#pendingSubmissions += 1;
      try {
        const prepared = await this.#generation.pool.prepare(request, { taskTimeoutMs: this.#options.taskTimeoutMs });
        assertKnownAgent(this.#registry, prepared.agent);
        this.#assertServing();
        const { scheduler } = this.#generation;
        const reservation = scheduler.reserve(prepared.request_bytes);
        let record: EvalJobRecord;
        try {
          record = await this.#store.createEvaluation(checked, prepared);
        } catch (error) {
          scheduler.release(reservation, prepared.request_bytes);
          throw error;
        }
        if (scheduler !== this.#generation.scheduler) return await failCreatedAfterRestart(this.#store, checked, record);
        const execution = { job_id: record.job_id, scope: checked, agent: prepared.agent, set: prepared.set, metrics: prepared.metrics, options: prepared.options };
        return await scheduler.admit(reservation, record, execution);
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
    return this.#call(() => this.#generation.scheduler.cancel(checkEvalScope(scope), checkEvalJobId(jobId)));
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
    const { activeJobs, queuedJobs, queuedBytes } = this.#generation.scheduler;
    const counts = { activeJobs, queuedJobs, queuedBytes, pendingSubmissions: this.#pendingSubmissions, recoveredJobs: this.#recovered };
    return evalCapabilities({ state: this.#state, identitySource: this.#generation.ownership.identitySource, options: this.#options, ...counts });
  }

  /** Readiness: `running` with the ownership locks held and their connection answering within `timeoutMs`. */
  async isHealthy(timeoutMs: number): Promise<boolean> {
    return this.#state === 'running' && (await this.#generation.ownership.ping(timeoutMs));
  }

  toJSON(): EvalCapabilities {
    return this.capabilities();
  }

  [inspect.custom](): string {
    return `EvalService ${inspect(this.capabilities())}`;
  }

  /** A new current generation; callbacks of an older one are ignored. */
  #newGeneration(): void {
    this.#generation = new EvalGeneration({
      store: this.#store,
      clock: this.#clock,
      options: this.#options,
      registry: this.#registry,
      events: this.#deps.events,
      preparationWorkerFile: this.#deps.preparationWorkerFile,
      isRunning: (generation) => generation === this.#generation && this.#state === 'running',
      failStop: (generation, reason) => this.#failStop(generation, reason),
      takeOver: (generation) => this.#takeOver(generation),
    });
  }

  async #takeOver(generation: EvalGeneration): Promise<void> {
    await generation.ownership.recheckIdentity();
    await generation.ownership.assertSchema();
    try {
      this.#recovered = await this.#store.recover();
    } catch {
      throw new EvalServiceError('eval_store_recovery_failed');
    }
    await generation.pool.start();
    if (generation !== this.#generation || this.#state === 'stopped') throw new EvalServiceError('eval_service_unavailable', { state: 'stopped' });
    this.#state = 'running';
  }

  #failStop(generation: EvalGeneration, reason: string): void {
    if (generation !== this.#generation || this.#state === 'stopped') return;
    this.#stopReason = reason;
    this.#state = 'stopped';
    safely(() => this.#deps.logger?.error(`evaluation service stopped: ${reason}; the next generation's start fails the unfinished jobs`));
    void generation.release().then(() => safely(() => this.#deps.onFaultStop?.(reason)));
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

/** A broken logger or stop listener must not keep the service from stopping. */
function safely(call: () => void): void {
  try {
    call();
  } catch {
    // ignored on purpose
  }
}

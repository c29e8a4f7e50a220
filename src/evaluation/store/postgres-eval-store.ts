import type { DataSource } from 'typeorm';
import { dedicatedConnectionOpener } from '../../database/dedicated-connection';
import { classifyFailure } from '../../database/postgres-failure';
import type { DedicatedClient } from '../../database/postgres-pool';
import { assertSchema } from '../../database/schema/schema-validator';
import { SchemaValidatorError } from '../../database/schema-validator.errors';
import { systemClock, type Clock } from '../../shared/time/clock';
import { retry } from '../../shared/time/retry';
import { EvalServiceError } from '../eval.errors';
import type {
  EvalBaselineRecord,
  EvalBaselineWithResult,
  EvalJobRecord,
  EvalPage,
  EvalPageOptions,
  EvalPhase,
  EvalPruneOptions,
  EvalPruneReport,
  EvalResult,
  EvalScope,
  EvalSetRevision,
  EvalSetSummary,
  EvalStore,
  EvalStoreIdentity,
  EvalTransitionFields,
  PreparedEvalRequest,
} from '../eval.types';
import { getBaseline, putBaseline, type BaselineTarget } from './eval-store-baselines';
import { EvalStoreContext } from './eval-store-context';
import { createEvaluation } from './eval-store-creation';
import { readOwnershipIdentity } from './eval-store-identity';
import { resolveEvalStoreOptions, type PostgresEvalStoreOptions, type ResolvedEvalStoreOptions } from './eval-store-options';
import { pruneStore } from './eval-store-prune';
import { getJob, getResult, getSet, listJobs, listSets } from './eval-store-reads';
import { evalStoreTableSpecs } from './eval-store.schema';
import { recoverJobs, transitionJob } from './eval-store-transition';

/** Pause between attempts to open the dedicated connection. */
const CONNECT_RETRY_DELAY_MS = 500;

/** What a {@link PostgresEvalStore} takes besides its options. */
export interface PostgresEvalStoreDeps {
  /** Source of every timestamp (`wallNow()`) and of the pauses between connection attempts. @default systemClock */
  readonly clock?: Clock;
}

/**
 * The evaluation service's store on Postgres (spec 05 §2): the five tables of migration
 * `EvaluationStore1764800000000` (or of `createEvalStoreMigrations(prefix)`), validated by
 * {@link assertSchema}, never created or altered here. Every method is one transaction with
 * `SET LOCAL statement_timeout`; a database failure is `eval_store_unavailable` with its SQLSTATE
 * and socket code only. Records are frozen snake_case objects. The options are validated at once
 * (`unknown_eval_store_options`, `invalid_eval_store_options`); the DataSource may be initialised later.
 *
 * @example
 * const store = new PostgresEvalStore(dataSource, { maxJobs: 50_000 });
 * const service = new EvalService({ store, registry });
 */
export class PostgresEvalStore implements EvalStore {
  readonly #context: EvalStoreContext;

  constructor(dataSource: DataSource, options?: PostgresEvalStoreOptions, deps: PostgresEvalStoreDeps = {}) {
    this.#context = new EvalStoreContext(dataSource, resolveEvalStoreOptions(options), deps.clock ?? systemClock);
  }

  /** The options with their defaults applied. */
  get options(): ResolvedEvalStoreOptions {
    return this.#context.settings;
  }

  /**
   * Opens a dedicated connection (not pooled, TCP keep-alive on) with the pool's connection options,
   * retrying connection failures `connectRetries` times 500 ms apart; then `eval_store_unavailable`
   * (`{attempts, sqlstate, socket_error}`). The caller owns and closes it.
   */
  async openDedicatedConnection(): Promise<DedicatedClient> {
    const open = dedicatedConnectionOpener(this.#context.pool());
    let attempts = 0;
    try {
      return await retry(
        () => ((attempts += 1), open()),
        { attempts: this.#context.settings.connectRetries + 1, delayMs: CONNECT_RETRY_DELAY_MS, retryable: (error) => classifyFailure(error).connection },
        this.#context.clock,
      );
    } catch (error) {
      throw new EvalServiceError('eval_store_unavailable', { attempts, ...classifyFailure(error).codes });
    }
  }

  /** The identity of the tables (spec 05 §2.4) read through `connection`, or the pool when omitted. */
  ownershipIdentity(connection?: DedicatedClient): Promise<EvalStoreIdentity> {
    return readOwnershipIdentity(this.#context, connection);
  }

  /**
   * Validates the five tables and the migrations with the shared validator, reading
   * `synchronous_commit` on the pool and on `connection`: `schema_mismatch` (`{mismatches}`) listing
   * every difference; an unreadable catalog is `eval_store_unavailable`.
   */
  async assertSchema(connection: DedicatedClient): Promise<void> {
    const settings = this.#context.settings;
    try {
      await assertSchema(
        this.#context.source,
        evalStoreTableSpecs(settings.tablePrefix),
        {
          ...(settings.schema === null ? {} : { schema: settings.schema }),
          connectRetries: settings.connectRetries,
          requireSynchronousStandby: settings.requireSynchronousStandby,
          dedicatedConnections: [connection],
          clock: this.#context.clock,
        },
        (mismatches) => new EvalServiceError('schema_mismatch', { mismatches }),
      );
    } catch (error) {
      if (EvalServiceError.isEvalServiceError(error)) throw error;
      const details = error instanceof SchemaValidatorError ? error.details : undefined;
      throw new EvalServiceError('eval_store_unavailable', {
        sqlstate: (details?.sqlstate as string | null | undefined) ?? null,
        socket_error: (details?.socket_error as string | null | undefined) ?? null,
      });
    }
  }

  /** Fails every `queued` or `running` job with `evaluation_service_restarted` in one statement; the number of rows. */
  recover(): Promise<number> {
    return recoverJobs(this.#context);
  }

  /** Stores the set revision (or checks its digest) and a new `queued` job, under the caps, in one transaction. */
  createEvaluation(scope: EvalScope, request: PreparedEvalRequest): Promise<EvalJobRecord> {
    return createEvaluation(this.#context, scope, request);
  }

  /** Compare-and-set of the job's phase (spec 05 §5). */
  transition(scope: EvalScope, jobId: string, expected: readonly EvalPhase[], to: EvalPhase, fields?: EvalTransitionFields): Promise<EvalJobRecord> {
    return transitionJob(this.#context, scope, jobId, expected, to, fields);
  }

  /** The app's job; `not_found` for an absent job or another app's. */
  getJob(scope: EvalScope, jobId: string): Promise<EvalJobRecord> {
    return getJob(this.#context, scope, jobId);
  }

  /** The job and, when `completed`, its result. */
  getResult(scope: EvalScope, jobId: string): Promise<{ readonly job: EvalJobRecord; readonly result: EvalResult | null }> {
    return getResult(this.#context, scope, jobId);
  }

  /** The app's jobs by `(created_at_ms, job_id)`; `invalid_eval_cursor`, `invalid_eval_store_arguments` (`limit`). */
  listJobs(scope: EvalScope, options?: EvalPageOptions): Promise<EvalPage<EvalJobRecord>> {
    return listJobs(this.#context, scope, options);
  }

  /** The app's set revision with its content; `not_found` when absent. */
  getSet(scope: EvalScope, evalSetId: string, version: string): Promise<EvalSetRevision> {
    return getSet(this.#context, scope, evalSetId, version);
  }

  /** The app's set revisions by `(eval_set_id, eval_set_version)`, without content. */
  listSets(scope: EvalScope, options?: EvalPageOptions): Promise<EvalPage<EvalSetSummary>> {
    return listSets(this.#context, scope, options);
  }

  /** Upserts a baseline pointing at a completed job of the set. */
  putBaseline(scope: EvalScope, baseline: BaselineTarget): Promise<EvalBaselineRecord> {
    return putBaseline(this.#context, scope, baseline);
  }

  /** The baseline with its job's result; `not_found` when absent. */
  getBaseline(scope: EvalScope, evalSetId: string, name: string): Promise<EvalBaselineWithResult> {
    return getBaseline(this.#context, scope, evalSetId, name);
  }

  /** Deletes old rows within a bounded scan (spec 05 §6); `invalid_prune_options`, `invalid_eval_cursor`. */
  prune(options: EvalPruneOptions): Promise<EvalPruneReport> {
    return pruneStore(this.#context, options);
  }
}

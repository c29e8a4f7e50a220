import type { Clock } from '../../shared/time/clock';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { EvalServiceError } from '../eval.errors';
import type { EvalJobRecord, EvalScope, EvalStore } from '../eval.types';
import type { EvalRunnerRegistry } from '../executor/local-eval-executor';
import { RequestPreparationPool } from '../preparation/request-preparation-pool';
import { emitJobTransition } from './eval-job-telemetry';
import { workerExecutor, type ResolvedEvalServiceOptions } from './eval-service-options';
import { EvalOwnershipSession } from './eval-ownership-session';
import { EvalTaskScheduler } from './eval-task-scheduler';

/** What a generation is built on, and what it tells its service (always naming itself). */
export interface EvalGenerationHost {
  readonly store: EvalStore;
  readonly clock: Clock;
  readonly options: ResolvedEvalServiceOptions;
  readonly registry: EvalRunnerRegistry | undefined;
  readonly events: TelemetrySink | undefined;
  readonly preparationWorkerFile: string | undefined;
  /** Whether this generation is the service's current one and the service is `running`. */
  isRunning(generation: EvalGeneration): boolean;
  /** This generation stops on a fault (ignored when it is no longer current). */
  failStop(generation: EvalGeneration, reason: string): void;
  /** This generation won the lock in standby: start-up steps 3–7. */
  takeOver(generation: EvalGeneration): Promise<void>;
}

/**
 * What one generation of an evaluation service owns (spec 05 §6.1): the ownership session (its
 * connection and locks), the preparation pool, and the scheduler with its queue and active tasks. A
 * restart releases a stopped generation and builds a new one behind the same `EvalService`.
 */
export class EvalGeneration {
  readonly pool: RequestPreparationPool;
  readonly scheduler: EvalTaskScheduler;
  readonly ownership: EvalOwnershipSession;

  constructor(host: EvalGenerationHost) {
    const { executor, config } = workerExecutor(host.options.worker, host.registry, host.clock);
    this.pool = new RequestPreparationPool(host.options.preparation, { clock: host.clock, ...(host.preparationWorkerFile ? { filename: host.preparationWorkerFile } : {}) });
    const scheduler: EvalTaskScheduler = new EvalTaskScheduler({
      store: host.store,
      executor,
      executorConfig: config,
      clock: host.clock,
      limits: host.options,
      isRunning: () => host.isRunning(this),
      failStop: (reason) => host.failStop(this, reason),
      transitioned: (before, after) => emitJobTransition(host.events, before, after, scheduler),
    });
    this.scheduler = scheduler;
    this.ownership = new EvalOwnershipSession(host.store, host.clock, {
      takeOver: () => host.takeOver(this),
      failed: (reason) => host.failStop(this, reason),
      lost: () => host.failStop(this, 'eval_store_ownership_lost'),
    });
  }

  /** Running tasks are abandoned without writing, the queue dropped, the pool destroyed, the lock released last. */
  async release(): Promise<void> {
    this.scheduler.abandonAll();
    await this.pool.destroy().catch(() => undefined);
    await this.ownership.close();
  }
}

/**
 * A job created while its generation was replaced: the new generation's recovery may have run
 * before the row existed, so it is failed here, never left `queued` without a scheduler.
 */
export async function failCreatedAfterRestart(store: EvalStore, scope: EvalScope, record: EvalJobRecord): Promise<never> {
  await store.transition(scope, record.job_id, ['queued'], 'failed', { reason: 'evaluation_service_restarted' }).catch(() => undefined);
  throw new EvalServiceError('eval_service_unavailable', { reason: 'evaluation_service_restarted' });
}

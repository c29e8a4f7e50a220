import type { JsonValue } from '../../json/json.types';
import type { Clock } from '../../shared/time/clock';
import { sleep } from '../../shared/time/timeout';
import { EvalServiceError } from '../eval.errors';
import type { EvalExecution, EvalExecutor, EvalJobRecord, EvalPhase, EvalScope, EvalStore, EvalTransitionFields, PublicEvalJob } from '../eval.types';
import { EvalJobQueue } from './eval-job-queue';
import { storedOutcome, type TaskSettlement } from './eval-task-outcome';
import { writeTerminal } from './eval-terminal-write';
import type { ResolvedEvalServiceOptions } from './eval-service-options';
import { publicEvalJob } from './public-eval-job';

/** How long an aborted task has to settle before the phase the service decided is stored (spec 05 §5.1). */
export const ABORT_SETTLE_MS = 5000;

/** A job holding an active slot, from its `queued → running` transition to its terminal write. */
interface ActiveTask {
  readonly scope: EvalScope;
  readonly jobId: string;
  record: EvalJobRecord;
  readonly controller: AbortController;
  /** The phase the service decided by aborting (timeout, cancel); the executor's report is then ignored. */
  decided: { readonly phase: EvalPhase; readonly reason: string } | null;
  started: boolean;
  /** The terminal write has begun (or the service stopped): nothing else writes for this task. */
  finalising: boolean;
  settled: Promise<TaskSettlement>;
  deadline: unknown;
}

/** What the scheduler needs of its service. */
export interface EvalSchedulerHost {
  readonly store: EvalStore;
  readonly executor: EvalExecutor;
  readonly executorConfig: JsonValue | undefined;
  readonly clock: Clock;
  readonly limits: Pick<ResolvedEvalServiceOptions, 'maxConcurrency' | 'maxQueue' | 'maxQueueBytes' | 'taskTimeoutMs' | 'taskRetentionMs'>;
  /** False once the service left `running`: nothing more is started or written. */
  isRunning(): boolean;
  /** Stops the service for good with `reason` (spec 05 §6.1). */
  failStop(reason: string): void;
  /** Telemetry of one committed transition. */
  transitioned(before: EvalJobRecord, after: EvalJobRecord): void;
}

/** Where a submission's admission put it (spec 05 §4.3 step 3). */
export type Reservation = 'slot' | 'queue';

/**
 * Admission, the FIFO queue and the active tasks of an evaluation service (spec 05 §4.3, §5, §6):
 * decisions are synchronous, every committed transition goes through the store's compare-and-set,
 * and a terminal outcome that cannot be stored stops the service instead of being lost.
 */
export class EvalTaskScheduler {
  readonly #queue = new EvalJobQueue();
  readonly #tasks = new Map<string, ActiveTask>();
  #active = 0;
  #queueReserved = 0;
  #queueReservedBytes = 0;

  constructor(private readonly host: EvalSchedulerHost) {}

  get activeJobs(): number {
    return this.#active;
  }

  get queuedJobs(): number {
    return this.#queue.size + this.#queueReserved;
  }

  get queuedBytes(): number {
    return this.#queue.bytes + this.#queueReservedBytes;
  }

  /** Reserves an active slot, else a queue place, else `evaluation_queue_full`; nothing is written. */
  reserve(bytes: number): Reservation {
    const { maxConcurrency, maxQueue, maxQueueBytes } = this.host.limits;
    if (this.#active < maxConcurrency) {
      this.#active += 1;
      return 'slot';
    }
    if (this.queuedJobs < maxQueue && this.queuedBytes + bytes <= maxQueueBytes) {
      this.#queueReserved += 1;
      this.#queueReservedBytes += bytes;
      return 'queue';
    }
    throw new EvalServiceError('evaluation_queue_full', { max_queue: maxQueue, max_queue_bytes: maxQueueBytes });
  }

  /** Gives back a reservation whose job was never created. */
  release(reservation: Reservation, bytes: number): void {
    if (reservation === 'slot') this.#freeSlot();
    else this.#unreserveQueue(bytes);
  }

  /** Admits a created (`queued`) job on its reservation: started at once on a slot, else appended to the FIFO. */
  async admit(reservation: Reservation, record: EvalJobRecord, execution: EvalExecution): Promise<PublicEvalJob> {
    if (reservation === 'slot') return this.#launch(record, execution);
    this.#unreserveQueue(record.request_bytes);
    this.#queue.push(record, execution);
    this.#pump();
    return publicEvalJob(record);
  }

  /** Cancels a job of `scope` (spec 05 §6): queued, running with or without an active entry, or terminal. */
  async cancel(scope: EvalScope, jobId: string): Promise<PublicEvalJob> {
    const queued = this.#queue.take(scope.app, jobId);
    if (queued !== undefined) {
      let cancelled: EvalJobRecord;
      try {
        cancelled = await this.host.store.transition(scope, jobId, ['queued'], 'cancelled', { reason: 'user_cancelled' });
      } catch {
        this.host.failStop('evaluation_cancel_persistence_failed');
        throw new EvalServiceError('evaluation_cancel_persistence_failed');
      }
      this.host.transitioned(queued.record, cancelled);
      return publicEvalJob(cancelled);
    }
    const task = this.#tasks.get(jobId);
    if (task !== undefined && task.scope.app === scope.app && !task.finalising) {
      this.#abort(task, 'cancelled', 'user_cancelled');
      return publicEvalJob(task.record);
    }
    const job = await this.host.store.getJob(scope, jobId);
    if (job.phase !== 'queued' && job.phase !== 'running') throw new EvalServiceError('already_terminal', { phase: job.phase });
    if (task !== undefined && task.scope.app === scope.app) return publicEvalJob(job);
    const reason = job.phase === 'running' ? 'task_not_found' : 'user_cancelled';
    const cancelled = await this.host.store.transition(scope, jobId, [job.phase], 'cancelled', { reason });
    this.host.transitioned(job, cancelled);
    return publicEvalJob(cancelled);
  }

  /** A stop: every task is aborted without writing its outcome and the queue is dropped; the rows stay for recovery. */
  abandonAll(): void {
    for (const task of this.#tasks.values()) {
      task.finalising = true;
      if (task.deadline !== undefined) this.host.clock.clearTimer(task.deadline);
      task.controller.abort('shutdown');
    }
    this.#tasks.clear();
    this.#queue.clear();
  }

  async #launch(queued: EvalJobRecord, execution: EvalExecution): Promise<PublicEvalJob> {
    const scope: EvalScope = execution.scope;
    const task: ActiveTask = {
      scope,
      jobId: queued.job_id,
      record: queued,
      controller: new AbortController(),
      decided: null,
      started: false,
      finalising: false,
      settled: Promise.resolve({ kind: 'rejected' }),
      deadline: undefined,
    };
    this.#tasks.set(task.jobId, task);
    let running: EvalJobRecord;
    try {
      running = await this.host.store.transition(scope, task.jobId, ['queued'], 'running');
    } catch (error) {
      if (EvalServiceError.isEvalServiceError(error) && error.code === 'stale_phase') return this.#settledElsewhere(task);
      return this.#compensate(task, ['queued'], reasonOf(error));
    }
    this.host.transitioned(queued, running);
    task.record = running;
    if (!this.host.isRunning()) return publicEvalJob(running);
    if (task.decided !== null) {
      void this.#finalise(task, task.decided.phase, { reason: task.decided.reason });
      return publicEvalJob(running);
    }
    let outcome: unknown;
    try {
      outcome = this.host.executor.start(execution, task.controller.signal, this.host.executorConfig);
      if (typeof (outcome as { then?: unknown } | null)?.then !== 'function') throw new TypeError('not a promise');
    } catch {
      task.controller.abort('admission_failed');
      return this.#compensate(task, ['queued', 'running'], 'executor_start_failed');
    }
    task.started = true;
    task.settled = Promise.resolve(outcome).then(
      (value): TaskSettlement => ({ kind: 'resolved', value }),
      (): TaskSettlement => ({ kind: 'rejected' }),
    );
    task.deadline = this.host.clock.setTimer(() => this.#abort(task, 'timed_out', 'deadline_exceeded'), this.host.limits.taskTimeoutMs);
    void task.settled.then((settlement) => this.#onSettled(task, settlement));
    return publicEvalJob(running);
  }

  /** The `queued → running` move found the row already moved by someone else: nothing to undo. */
  async #settledElsewhere(task: ActiveTask): Promise<PublicEvalJob> {
    this.#endTask(task);
    return publicEvalJob(await this.host.store.getJob(task.scope, task.jobId));
  }

  async #compensate(task: ActiveTask, expected: readonly EvalPhase[], reason: string): Promise<never> {
    task.finalising = true;
    let failed: EvalJobRecord;
    try {
      failed = await this.host.store.transition(task.scope, task.jobId, expected, 'failed', { reason: 'admission_failed' });
    } catch {
      this.host.failStop('evaluation_compensation_failed');
      throw new EvalServiceError('evaluation_compensation_failed', { job_id: task.jobId });
    }
    this.host.transitioned(task.record, failed);
    this.#endTask(task);
    throw new EvalServiceError('evaluation_job_admission_failed', { job_id: task.jobId, reason });
  }

  #onSettled(task: ActiveTask, settlement: TaskSettlement): void {
    // a late report (aborted task, replaced entry, stopped service) never writes
    if (this.#tasks.get(task.jobId) !== task || task.finalising || task.decided !== null) return;
    const { phase, fields } = storedOutcome(settlement);
    void this.#finalise(task, phase, fields);
  }

  /** The service decides the phase, aborts the executor, and stores the phase once it settled or 5 s passed. */
  #abort(task: ActiveTask, phase: EvalPhase, reason: string): void {
    if (task.finalising || task.decided !== null) return;
    task.decided = { phase, reason };
    task.controller.abort(reason);
    if (!task.started) return;
    void Promise.race([task.settled, sleep(ABORT_SETTLE_MS, this.host.clock)]).then(() => this.#finalise(task, phase, { reason }));
  }

  async #finalise(task: ActiveTask, phase: EvalPhase, fields: EvalTransitionFields): Promise<void> {
    if (task.finalising) return;
    task.finalising = true;
    if (task.deadline !== undefined) this.host.clock.clearTimer(task.deadline);
    if (!this.host.isRunning()) return;
    let stored: EvalJobRecord;
    try {
      stored = await writeTerminal({ store: this.host.store, clock: this.host.clock, scope: task.scope, jobId: task.jobId }, phase, fields);
    } catch {
      this.host.failStop('evaluation_result_persistence_failed');
      return;
    }
    this.host.transitioned(task.record, stored);
    this.#endTask(task);
  }

  /** The task's slot frees; its entry stays `taskRetentionMs` to absorb late reports. */
  #endTask(task: ActiveTask): void {
    task.finalising = true;
    if (task.deadline !== undefined) this.host.clock.clearTimer(task.deadline);
    this.host.clock.setTimer(() => {
      if (this.#tasks.get(task.jobId) === task) this.#tasks.delete(task.jobId);
    }, this.host.limits.taskRetentionMs);
    this.#freeSlot();
  }

  #freeSlot(): void {
    this.#active -= 1;
    this.#pump();
  }

  #unreserveQueue(bytes: number): void {
    this.#queueReserved -= 1;
    this.#queueReservedBytes -= bytes;
  }

  /** Starts queued jobs, oldest first, while slots are free. */
  #pump(): void {
    while (this.host.isRunning() && this.#active < this.host.limits.maxConcurrency && this.#queue.size > 0) {
      const next = this.#queue.shift();
      if (next === undefined) return;
      this.#active += 1;
      this.#launch(next.record, next.execution).catch(() => undefined);
    }
  }
}

function reasonOf(error: unknown): string {
  return EvalServiceError.isEvalServiceError(error) ? error.code : 'evaluation_store_failed';
}

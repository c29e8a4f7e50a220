import type { CallOutcome, RouterCall } from './router-call';
import type { RouterTransitions } from './router-transitions';
import { WorkerJob, type ScopeOperation, type ScopeWorker } from './scope-worker';

/** What the operation queue uses of its router. */
export interface WorkerOperationDeps<S> {
  readonly transitions: RouterTransitions;
  now(): number;
  /** Records an access of a live worker. */
  touch(worker: ScopeWorker<S>): void;
  /** Ends a call's wait (no-op when it has ended already). */
  finish(call: RouterCall<S>, outcome: CallOutcome): void;
  adapterError(error: unknown): unknown;
}

/**
 * The operations of every worker: queued in arrival order, started one at a time per worker with
 * the call's remaining time (≥ 1 ms) and signal; a call without time left or without its caller
 * is ended (`timeout`, `scope_route_caller_unavailable`) without calling the adapter. The next
 * operation starts only when the running one has settled, even when its caller stopped waiting.
 */
export class WorkerOperations<S> {
  constructor(private readonly deps: WorkerOperationDeps<S>) {}

  enqueue(worker: ScopeWorker<S>, call: RouterCall<S>, scope: S, operation: ScopeOperation<S, unknown>): void {
    const job = new WorkerJob(worker, call, scope, operation);
    worker.jobs.push(job);
    call.job = job;
    if (worker.running === null) this.deps.transitions.push(() => this.pump(worker));
  }

  /** Takes a call's operation out of its worker's queue (the call ended before it started). */
  dequeue(call: RouterCall<S>): void {
    const job = call.job;
    if (job === null) return;
    call.job = null;
    job.worker.jobs.remove(job);
  }

  /** Starts the worker's next operation that still has a caller and time (an effect). */
  private pump(worker: ScopeWorker<S>): void {
    if (worker.running !== null || worker.state !== 'live') return;
    for (let job = worker.jobs.head; job !== null; job = worker.jobs.head) {
      worker.jobs.remove(job);
      job.call.job = null;
      const now = this.deps.now();
      const refusal = job.call.refusal(now);
      if (refusal) {
        this.deps.finish(job.call, { ok: false, error: refusal });
        continue;
      }
      worker.running = job;
      this.invoke(job, job.call.remainingMs(now));
      return;
    }
  }

  private invoke(job: WorkerJob<S>, timeoutMs: number): void {
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(job.operation(job.scope, Object.freeze({ signal: job.call.signal, timeoutMs })));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => this.deps.transitions.guard(() => this.settled(job, { ok: true, value })),
      (error: unknown) => this.deps.transitions.guard(() => this.settled(job, { ok: false, error: this.deps.adapterError(error) })),
    );
  }

  private settled(job: WorkerJob<S>, outcome: CallOutcome): void {
    const worker = job.worker;
    if (worker.running === job) worker.running = null;
    this.deps.touch(worker);
    this.deps.finish(job.call, outcome);
    if (worker.state === 'live') this.deps.transitions.push(() => this.pump(worker));
  }
}

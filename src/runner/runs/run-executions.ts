import { handled } from '../../shared/async/handled-promise';
import { CoalescedTask } from '../../shared/async/coalesced-task';
import type { Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';
import { HANDOVER_REASON } from '../invocation/invocation-scope';
import { driveInvocation, type ActiveRun, type Invoke } from './run-driver';
import { untilWritten, type Persist } from './run-write-retry';
import type { RunWriter } from './run-writer';
import { isFinishedStatus, type RunStore, type StoredRun } from './stores/run-store';

/**
 * The invocations a registry executes in this process, one detached background task per run, each
 * holding its invocation's AbortController; every task's promise is handled.
 */
export class RunExecutions {
  private readonly active = new Map<string, ActiveRun>();
  /** Aborted once the wind-down's grace is over: the terminal writes still failing stop repeating. */
  private readonly closing = new AbortController();
  /** Repeats a run's terminal write until it lands (250 ms doubling to 5 s on the clock), until the wind-down is over. */
  readonly persist: Persist = (write) => untilWritten(write, this.clock, this.closing.signal);

  constructor(
    private readonly store: RunStore,
    private readonly writer: RunWriter,
    private readonly clock: Clock,
  ) {}

  /** Invocations executing now. */
  get size(): number {
    return this.active.size;
  }

  has(runId: string): boolean {
    return this.active.has(runId);
  }

  /** Ids of the runs whose invocation executes here now. */
  ids(): readonly string[] {
    return [...this.active.keys()];
  }

  /** Aborts the run's invocation, if it executes here. */
  abort(runId: string, reason: string): void {
    this.active.get(runId)?.controller.abort(reason);
  }

  /** Starts the background task of an invocation; `previous` is set for a resume (the pending call ids to restore on failure). */
  launch(runId: string, previous: readonly string[] | false, invoke: Invoke): void {
    const active: ActiveRun = { controller: new AbortController(), started: false, ended: false, writes: Promise.resolve(), done: Promise.resolve() };
    this.active.set(runId, active);
    const unwatch = this.watchForForeignEnd(runId, active);
    active.done = handled(
      driveInvocation(this.writer, runId, active, previous, invoke, this.persist).finally(() => {
        unwatch();
        if (this.active.get(runId) === active) this.active.delete(runId);
      }),
    );
  }

  /**
   * At shutdown: `cancel`s every executing run, except that on a store other instances share a
   * durable run with an invocation is handed over instead. Its invocation stops without recording an
   * end and the run stays unfinished, owned here, so once this instance is gone another one takes it
   * over and resumes it from its ledger checkpoint (spec 08 §4). A cancel that cannot be written (the
   * database is down) still aborts the invocation, whose driver then writes the ending itself, repeated
   * until it lands. A run whose invocation already ended is left to its driver: the pause or ending it
   * writes (or has written) stands, and a cancel would overwrite a pause that just landed. Then waits
   * up to `graceMs` for the invocations to wind down; terminal writes still failing after that stop
   * repeating.
   */
  async windDown(cancel: (runId: string) => Promise<unknown>, shared: boolean, graceMs: number): Promise<void> {
    const runs = [...this.active];
    const executing = runs.filter(([, active]) => !active.ended);
    await Promise.all(
      executing.map(async ([runId, active]) => (shared && (await this.handedOver(runId, active))) || cancel(runId).catch(() => active.controller.abort('shutdown'))),
    );
    const settled = Promise.all(runs.map(([, active]) => active.done));
    await within(settled, graceMs, this.clock).catch(() => undefined);
    this.closing.abort();
  }

  private async handedOver(runId: string, active: ActiveRun): Promise<boolean> {
    const run = await this.store.get(runId).catch(() => undefined);
    if (!run?.durable || run.invocation_id === null || isFinishedStatus(run.status)) return false;
    active.controller.abort(HANDOVER_REASON);
    return true;
  }

  /**
   * Aborts the invocation once its stored run is finished by someone else: a cancel posted to
   * another instance writes the terminal item by compare-and-set, and that item *is* the cancel
   * request; the store's watch (NOTIFY, or its poll) brings it here. One read at a time; wakes
   * during a read ask for one more.
   */
  private watchForForeignEnd(runId: string, active: ActiveRun): () => void {
    const over = () => active.ended || active.controller.signal.aborted;
    const check = new CoalescedTask(async () => {
      if (over()) return;
      const run = await this.store.get(runId);
      if (!over() && (run === undefined || isFinishedStatus(run.status))) active.controller.abort(endReason(run));
    });
    return this.store.watch(runId, () => check.trigger());
  }
}

/** The reason an invocation is aborted with when its run was finished elsewhere: the cancel reason, else the status. */
function endReason(run: StoredRun | undefined): string {
  const reason = run?.error?.details?.reason;
  return run?.status === 'cancelled' && typeof reason === 'string' ? reason : (run?.status ?? 'cancelled');
}

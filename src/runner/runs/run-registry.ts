import type { Clock } from '../../shared/time/clock';
import { KeyedSerial } from '../../shared/async/keyed-serial';
import { isValidId } from '../../shared/ids/id-rule';
import { readOptions } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { randomId } from '../../shared/ids/random-id';
import { newSessionId } from '../session-id';
import { RunExecutions } from './run-executions';
import { endAbandoned, takeOverOrphan } from './run-takeover';
import { cancelledEnding, draining, notActive } from './run-outcome';
import { resolveRunRegistryOptions, runnersByAgent, type ResolvedRunRegistryOptions, type RunRegistryOptions } from './run-registry-options';
import type { ConfirmationInput, RegistryRunner, RunRegistryStatus, RunStarted, RunStatusRecord, StartRunRequest, SubscribeOptions } from './run-registry.types';
import { invalidRunRequest, readCancelReason, readConfirmation, readStartRequest } from './run-registry-request';
import { isFinishedStatus, ownedRecord, statusRecord, type RunStore, type StoredRun } from './stores/run-store';
import type { OwnedRun } from './run-access';
import { RunSubscription } from './run-subscription';
import { RunLifecycleTrace } from './run-lifecycle-trace';
import { TraceProducer } from '../../trace/trace-producer';
import { EXECUTING, PAUSED, RunWriter } from './run-writer';
import { RunnerError } from '../runner.errors';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';

const isAfterSeq = integerIn(0);
const isListLimit = integerIn(1, 1024);

/**
 * Owns every run it starts (spec 03 §9): HTTP requests only start, read, follow, cancel and confirm
 * runs, and never own one. Each run executes in a detached background task holding the invocation's
 * AbortController; its promise is always handled. Status and stream items live in a {@link RunStore}
 * (in memory by default); an item and the status it implies are written in one step, and nothing is
 * written after a run's terminal item, so each run has exactly one terminal item whichever of the
 * invocation, a cancel or a shutdown gets there first.
 *
 * @example
 * const registry = new RunRegistry({ runners: [runner] });
 * const { run_id } = await registry.start({ agent: 'assistant', userId: 'u-1', message: 'hello' });
 * for await (const item of registry.subscribe(run_id)) console.log(item.seq, item.type);
 */
export class RunRegistry {
  private runners: ReadonlyMap<string, RegistryRunner>;
  private readonly settings: ResolvedRunRegistryOptions;
  private readonly store: RunStore;
  private readonly clock: Clock;
  private readonly writer: RunWriter;
  private readonly lifecycle: RunLifecycleTrace;
  private readonly executions: RunExecutions;
  /** Per-run chains serialising cancel and confirm (each reads a status, then writes on it). */
  private readonly serial = new KeyedSerial();
  /** Ids of the runs this registry started or adopted, oldest first, for `list` (at most `maxRuns`). */
  private readonly known = new Set<string>();
  private shuttingDown: Promise<void> | undefined;
  /** Removes this registry's adopter of orphaned runs from a shared store. */
  private readonly stopAdopting: (() => void) | undefined;
  /** Removes this registry's reconciler of abandoned runs from a store that records owners. */
  private readonly stopReconciling: (() => void) | undefined;

  /** Validates synchronously; bad options give `invalid_runner_options` (`{field}`). */
  constructor(options: RunRegistryOptions) {
    this.settings = resolveRunRegistryOptions(options);
    this.runners = this.settings.runners;
    this.store = this.settings.store;
    this.clock = this.settings.clock;
    this.lifecycle = new RunLifecycleTrace(new TraceProducer(this.settings.traceStore), this.clock);
    this.writer = new RunWriter(this.store, this.clock, this.settings, this.lifecycle);
    this.executions = new RunExecutions(this.store, this.writer, this.clock);
    this.stopAdopting = this.store.adoptOrphans?.((run) => this.takeOver(run, 'adopt'));
    this.stopReconciling = this.store.reconcileOwned?.(
      () => this.executions.ids(),
      (run) => this.takeOver(run, 'reconcile'),
    );
  }

  /**
   * Starts a run and resolves with its ids once its record is stored, before it is admitted. A
   * session id is generated when absent (the Runner creates the session after admission). Throws
   * `invalid_run_request` (`{field}`), `agent_not_found`, `run_capacity_reached` (`{limit}`) when
   * every retained run is unfinished, and `admission_failed` (`deployment_draining`) after shutdown began.
   */
  async start(request: StartRunRequest): Promise<RunStarted> {
    const { agent, userId, owner, sessionId: givenSessionId, message, durable } = readStartRequest(request);
    this.assertAccepting();
    const runner = this.getRunner(agent);
    const runId = randomId('run-');
    const sessionId = givenSessionId ?? newSessionId();
    const now = this.clock.wallNow();
    const run: StoredRun = Object.freeze({
      schema_version: 1,
      run_id: runId,
      agent,
      session_id: sessionId,
      invocation_id: null,
      status: 'pending',
      pending_call_ids: Object.freeze([]),
      created_at_ms: now,
      updated_at_ms: now,
      last_seq: 0,
      error: null,
      user_id: userId,
      owner_principal: owner ?? null,
      durable: durable === true,
    });
    if (!(await this.store.create(run, { maxRuns: this.settings.maxRuns }))) throw new RunnerError('run_capacity_reached', { limit: this.settings.maxRuns });
    if (this.shuttingDown) {
      await this.store.delete(runId);
      throw draining();
    }
    this.remember(runId);
    this.lifecycle.started(run);
    this.executions.launch(runId, false, (signal, onAdmitted) =>
      runner.runAsync({ userId, sessionId, message, ...(durable === undefined ? {} : { durable }), signal, runId, onAdmitted, ...this.telemetry }),
    );
    return Object.freeze({ run_id: runId, session_id: sessionId });
  }

  /** The run's status record (no content); `run_not_found` for an unknown or malformed id. */
  async get(runId: string): Promise<RunStatusRecord> {
    return statusRecord(await this.storedRun(runId));
  }

  /** `get` with the run's owner principal (what access checks read). */
  async owned(runId: string): Promise<OwnedRun> {
    return ownedRecord(await this.storedRun(runId));
  }

  /**
   * Status records (no content, with the owner principal) of the runs this registry started or adopted that its store
   * still retains, newest first, at most `limit` (1..1024; else `invalid_run_request` `{field: 'limit'}`).
   * Runs other instances of a shared store started are not listed. @default limit 100
   */
  async list(limit: number = 100): Promise<readonly OwnedRun[]> {
    if (!isListLimit(limit)) throw invalidRunRequest('limit');
    const records: OwnedRun[] = [];
    for (const runId of [...this.known].reverse()) {
      if (records.length === limit) break;
      const run = await this.store.get(runId);
      if (run) records.push(ownedRecord(run));
      else this.known.delete(runId);
    }
    return Object.freeze(records);
  }

  /** The Runner new starts and resumes of `agentName` use; `agent_not_found` otherwise. */
  getRunner(agentName: string): RegistryRunner {
    const runner = typeof agentName === 'string' ? this.runners.get(agentName) : undefined;
    if (!runner) throw new RunnerError('agent_not_found');
    return runner;
  }

  /**
   * Follows a run: the buffered items after `afterSeq`, then live ones, ending after the terminal
   * item. `run_not_found` and `run_events_evicted` (`{oldest_seq}`) come from `ready()` or the first
   * `next()`; a bad `afterSeq` throws `invalid_run_request` (`{field: 'after_seq'}`) at once. Ending
   * the iteration detaches only this subscriber.
   */
  subscribe(runId: string, options: SubscribeOptions = {}): RunSubscription {
    const read = readOptions(options, { afterSeq: isAfterSeq }, { name: 'after_seq', unknownKeys: 'refuse' });
    if (!read.ok) throw invalidRunRequest('after_seq');
    return new RunSubscription(this.store, runId, (read.values.afterSeq as number | undefined) ?? 0);
  }

  /**
   * Cancels an unfinished run and answers its status record: the terminal item `{status:
   * 'cancelled', cancelled: reason}` is written at once and the invocation is aborted (a queued
   * admission entry is removed, an active permit revoked); whatever the invocation produces later is
   * discarded. A paused run's continuations are cleared first. A finished run gives `run_not_active`
   * (`{status}`); a reason outside 1..128 characters `invalid_run_request` (`{field: 'reason'}`).
   */
  cancel(runId: string, reason: string = 'cancelled'): Promise<RunStatusRecord> {
    const why = readCancelReason(reason);
    return this.serial.run(runId, async () => {
      const run = await this.storedRun(runId);
      if (isFinishedStatus(run.status)) throw notActive(run);
      if (run.status === 'paused') {
        const runner = this.runners.get(run.agent);
        if (runner && run.invocation_id) await runner.discardContinuations({ userId: run.user_id, sessionId: run.session_id, invocationId: run.invocation_id });
      }
      const ended = await this.writer.end(runId, cancelledEnding(why), run.status === 'paused' ? PAUSED : EXECUTING);
      if (!ended.written) throw notActive(ended.run);
      this.executions.abort(runId, why);
      return statusRecord(ended.run);
    });
  }

  /**
   * Answers a pending confirmation of a paused run and resumes it in the background (the `resumed`
   * item comes first). Validated before anything changes: `resume_input_required` (`{field}`),
   * `run_not_active` (`{status}`) unless paused, `invocation_not_found` for a call id that is not
   * pending. A resume that fails before it starts executing (admission, say) yields `resume_failed`
   * and the run is `paused` again. `confirmedBy` (the approver's principal id) goes on the `resumed` item, the
   * answered call's `tool_response` event (`confirmed_by`) and its re-check's decision (`approved_by`).
   */
  confirm(runId: string, callId: string, input: ConfirmationInput, confirmedBy?: string): Promise<RunStatusRecord> {
    return this.serial.run(runId, async () => {
      const run = await this.storedRun(runId);
      const runner = this.getRunner(run.agent);
      const decision = readConfirmation(input);
      runner.checkResumeInput(decision);
      if (run.status !== 'paused') throw notActive(run);
      if (typeof callId !== 'string' || !isValidId(callId) || !run.pending_call_ids.includes(callId)) throw new RunnerError('invocation_not_found');
      this.assertAccepting();
      const resumed = await this.writer.append(runId, { type: 'resumed', ...(isValidId(confirmedBy) ? { call_id: callId, confirmed_by: confirmedBy } : {}) }, { patch: { status: 'running', pending_call_ids: [], error: null }, expect: PAUSED });
      if (!resumed.written) throw notActive(resumed.run);
      const { confirmed, payload } = decision as ConfirmationInput;
      const invocationId = run.invocation_id as string;
      this.executions.launch(runId, run.pending_call_ids, (signal, onAdmitted) =>
        runner.resumeAsync({
          userId: run.user_id,
          sessionId: run.session_id,
          invocationId,
          callId,
          confirmed,
          ...(payload === undefined ? {} : { payload }),
          ...(isValidId(confirmedBy) ? { confirmedBy } : {}),
          signal,
          runId,
          onAdmitted,
          ...this.telemetry,
        }),
      );
      return statusRecord(resumed.run);
    });
  }

  /** Swaps the runners used by new starts and resumes; active runs finish on the runner that started them. */
  replaceRunners(runners: readonly RegistryRunner[]): void {
    this.runners = runnersByAgent(runners);
  }

  /** False once `shutdown()` began. */
  isAcceptingRuns(): boolean {
    return this.shuttingDown === undefined;
  }

  /** `{accepting, active}`: whether new runs are taken, and how many invocations execute here. */
  status(): RunRegistryStatus {
    return Object.freeze({ accepting: this.isAcceptingRuns(), active: this.executions.size });
  }

  /**
   * Stops taking runs and confirmations, cancels every executing run with reason `'shutdown'` and
   * waits up to `shutdownGraceMs` for their invocations to wind down. Paused runs hold no process:
   * on a store whose runs survive a restart (`survivesRestart`, Postgres) they stay paused, to be
   * confirmed after it; on any other store (the in-memory one) nobody could confirm them later, so
   * the paused runs this registry knows are cancelled with reason `'shutdown'` too. Later calls
   * return the same promise.
   */
  shutdown(): Promise<void> {
    this.stopAdopting?.();
    this.stopReconciling?.();
    this.shuttingDown ??= (async () => {
      await this.executions.windDown((runId) => this.cancel(runId, 'shutdown'), this.stopAdopting !== undefined, this.settings.shutdownGraceMs);
      if (this.store.survivesRestart !== true) await this.cancelPaused();
    })();
    return this.shuttingDown;
  }

  /** Cancels (`'shutdown'`) the paused runs among those this registry started or adopted. */
  private async cancelPaused(): Promise<void> {
    for (const runId of [...this.known]) {
      const run = await this.store.get(runId).catch(() => undefined);
      if (run?.status === 'paused') await this.cancel(runId, 'shutdown').catch(() => undefined);
    }
  }

  /**
   * An orphan of a shared store (`adopt`: resumed or ended here) or a run abandoned here (`reconcile`:
   * ended); nothing during shutdown, when an orphan is taken over again once this instance stops.
   */
  private takeOver(run: StoredRun, how: 'adopt' | 'reconcile'): void {
    if (this.shuttingDown || this.executions.has(run.run_id)) return;
    const parts = { runners: this.runners, executions: this.executions, writer: this.writer, clock: this.clock, telemetry: this.telemetry };
    if (how === 'reconcile') return endAbandoned(run, parts);
    this.remember(run.run_id);
    takeOverOrphan(run, parts);
  }

  /** The `events` of every run request: a runner without its own sink reports to the registry's. */
  private get telemetry(): { readonly events?: TelemetrySink } {
    return this.settings.events === null ? {} : { events: this.settings.events };
  }

  private remember(runId: string): void {
    this.known.add(runId);
    if (this.known.size > this.settings.maxRuns) this.known.delete(this.known.values().next().value as string);
  }

  private async storedRun(runId: string): Promise<StoredRun> {
    const run = isValidId(runId) ? await this.store.get(runId) : undefined;
    if (!run) throw new RunnerError('run_not_found');
    return run;
  }

  private assertAccepting(): void {
    if (this.shuttingDown) throw draining();
  }
}

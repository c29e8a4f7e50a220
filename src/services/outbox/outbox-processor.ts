import { randomUUID } from 'node:crypto';
import { handled } from '../../shared/async/handled-promise';
import { exponentialBackoff, retry } from '../../shared/time/retry';
import { timeoutSignal } from '../../shared/time/timeout-signal';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { IngestionCount } from '../services.types';
import { claimJobs, failExhausted, leasedEvents, type ClaimCursor, type ClaimedJob } from './outbox-claims';
import type { OutboxContext } from './outbox-context';
import { pruneOnce } from './outbox-prune';
import type { OutboxRegistry } from './outbox-registry';
import { deliveryErrorCode } from './outbox-retry';
import { COMPLETE, OWNER_GONE, writeSettle, type HeldLeases, type PendingSettle } from './outbox-leases';

/** The abort reason of a delivery whose lease ran out. */
const LEASE_EXPIRED = new RuntimeServiceError('timeout', { reason: 'memory_outbox_lease_expired' });
/** The abort reason of deliveries in flight when the outbox stops. */
const STOPPED = new RuntimeServiceError('runtime_service_generation_stale');

/** Pauses between the attempts of a settle that failed on the database, within the lease. */
const SETTLE_RETRY_FIRST_MS = 100;
const SETTLE_RETRY_MAX_MS = 2000;

type Outcome = { readonly ok: true; readonly value: IngestionCount } | { readonly ok: false; readonly error: unknown };

/**
 * The processor loop of one outbox instance (spec 07 §6.4): every `pollIntervalMs`, and soon after
 * an enqueue or a finished delivery, a cycle claims up to the free concurrency, starts each
 * delivery with a signal that aborts at the lease end, fails exhausted expired jobs, and prunes one
 * batch (at most once per `pollIntervalMs`). A database failure skips the rest of a cycle (the next
 * one tries again; the health probe decides about the dependency); any other error escaping the
 * loop's own bookkeeping kills it, and {@link died} resolves with `runtime_service_child_down`.
 * A settle that fails on the database is retried until the lease ends; one that still has not
 * landed, and every delivery abandoned by a stop, is handed to the {@link HeldLeases}, which each
 * cycle (of this or the next generation's processor) writes first.
 */
export class OutboxProcessor {
  /** Resolves (never rejects) when the loop dies; pending forever otherwise. */
  readonly died: Promise<RuntimeServiceError>;
  #reportDeath!: (error: RuntimeServiceError) => void;
  #dead = false;
  #stopped = false;
  #started = false;
  #timer: unknown = undefined;
  #cycle: Promise<void> | null = null;
  #again = false;
  #cursor: ClaimCursor | null = null;
  #lastPrune = -Infinity;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(
    private readonly context: OutboxContext,
    private readonly registry: OutboxRegistry,
    private readonly leases: HeldLeases,
  ) {
    this.died = new Promise((resolve) => {
      this.#reportDeath = resolve;
    });
  }

  /** Deliveries in flight. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  get isDead(): boolean {
    return this.#dead;
  }

  /** Starts the loop with a first cycle at once. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.schedule(0);
  }

  /** Asks for a cycle soon: now when idle, right after the running one otherwise. */
  kick(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#cycle !== null) this.#again = true;
    else this.schedule(0);
  }

  /**
   * Stops claiming and aborts the deliveries in flight; their results are discarded and their leases
   * simply expire, so the jobs stay for the next claimant. Resolves once the running cycle and the
   * delivery tasks have ended. Idempotent.
   */
  async stop(): Promise<void> {
    this.halt();
    await this.#cycle;
    await Promise.all([...this.#inFlight]);
  }

  private halt(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer !== undefined) this.context.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#stop.abort(STOPPED);
  }

  private schedule(ms: number): void {
    if (this.#timer !== undefined) this.context.clock.clearTimer(this.#timer);
    this.#timer = this.context.clock.setTimer(() => {
      this.#timer = undefined;
      this.runCycle();
    }, ms);
  }

  private runCycle(): void {
    if (this.#stopped || this.#cycle !== null) return;
    this.#again = false;
    this.#cycle = this.cycle().then(
      () => {
        this.#cycle = null;
        if (!this.#stopped) this.schedule(this.#again ? 0 : this.context.options.pollIntervalMs);
      },
      () => {
        this.#cycle = null;
        this.die();
      },
    );
  }

  private async cycle(): Promise<void> {
    if (this.leases.size > 0) await tolerated(this.leases.reconcile(this.context));
    if (this.#stopped) return;
    const free = this.context.options.processor.concurrency - this.#inFlight.size;
    const adapters = this.registry.ids();
    if (free > 0 && adapters.length > 0) {
      const claimedAt = this.context.clock.monotonicNow();
      const claimId = randomUUID();
      const cycle = await tolerated(claimJobs(this.context, adapters, free, this.#cursor, claimId));
      // a failed claim may still have committed: its leases are released once the database answers
      if (cycle === undefined) this.leases.holdLostClaim(claimId);
      else {
        this.#cursor = cycle.cursor;
        // jobs claimed while stopping go back at once through the held leases
        for (const job of cycle.claimed) {
          if (this.#stopped) this.leases.hold(job, OWNER_GONE);
          else this.deliver(job, claimedAt);
        }
        if (cycle.exhausted > 0 && !this.#stopped) await tolerated(failExhausted(this.context, adapters));
      }
    }
    const now = this.context.clock.monotonicNow();
    if (!this.#stopped && now - this.#lastPrune >= this.context.options.pollIntervalMs) {
      this.#lastPrune = now;
      await tolerated(pruneOnce(this.context));
    }
  }

  private deliver(job: ClaimedJob, claimedAt: number): void {
    const task: Promise<void> = this.delivery(job, claimedAt)
      .catch(() => this.die())
      .finally(() => {
        this.#inFlight.delete(task);
        this.kick();
      });
    this.#inFlight.add(task);
  }

  /**
   * One delivery. The lease timer starts from the host time before the claim was sent, so it fires
   * no later than the database's `lease_until_ms`. Whatever the target answers, the write is fenced
   * on the lease: a late success or failure after the lease was lost commits nothing.
   */
  private async delivery(job: ClaimedJob, claimedAt: number): Promise<void> {
    const { clock, options } = this.context;
    const target = this.registry.target(job.adapterId);
    const remaining = claimedAt + options.leaseMs - clock.monotonicNow();
    if (target === undefined || remaining < 1) return;
    const bound = timeoutSignal(this.#stop.signal, remaining, clock, LEASE_EXPIRED);
    let outcome: Outcome;
    try {
      const events = await tolerated(leasedEvents(this.context, job));
      // null: the lease is already gone; undefined: the database failed, so the job goes back once it answers
      if (events === null) return;
      if (events === undefined || this.#stopped) {
        this.leases.hold(job, OWNER_GONE);
        return;
      }
      const call = { signal: bound.signal, timeoutMs: Math.max(1, Math.floor(claimedAt + options.leaseMs - clock.monotonicNow())) };
      const answer = Promise.resolve().then(() => target.addEvents(job.scope, events, { epoch: job.epoch, jobId: job.jobId }, call));
      outcome = await settledOrAborted(answer, bound.signal);
    } finally {
      bound.dispose();
    }
    if (this.#stopped) {
      this.leases.hold(job, outcome.ok ? COMPLETE : OWNER_GONE);
      return;
    }
    await this.settle(job, outcome.ok ? COMPLETE : { kind: 'fail', code: bound.timedOut ? 'memory_outbox_lease_expired' : deliveryErrorCode(outcome.error) }, claimedAt);
  }

  /** Writes `settle`, retrying database failures until the lease ends or the outbox stops; then the held leases take it over. */
  private async settle(job: ClaimedJob, settle: PendingSettle, claimedAt: number): Promise<void> {
    const { clock, options } = this.context;
    try {
      await retry(() => writeSettle(this.context, job, settle, 'lease'), {
        attempts: Infinity,
        delayMs: exponentialBackoff(SETTLE_RETRY_FIRST_MS, SETTLE_RETRY_MAX_MS),
        retryable: (error) => RuntimeServiceError.isRuntimeServiceError(error),
        maxElapsedMs: Math.max(0, claimedAt + options.leaseMs - clock.monotonicNow()),
        signal: this.#stop.signal,
      }, clock);
    } catch (error) {
      if (!RuntimeServiceError.isRuntimeServiceError(error)) throw error;
      this.leases.hold(job, settle);
    }
  }

  /** The error itself is dropped: its text may carry anything. */
  private die(): void {
    if (this.#stopped || this.#dead) return;
    this.#dead = true;
    this.halt();
    this.#reportDeath(new RuntimeServiceError('runtime_service_child_down', { component: 'memory_outbox' }));
  }
}

/** The value of `work`, or `undefined` when it failed with an error of this package (a database failure); anything else is rethrown. */
async function tolerated<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if (RuntimeServiceError.isRuntimeServiceError(error)) return undefined;
    throw error;
  }
}

/** How `answer` settled, or the signal's reason once it aborts first; a late settlement of `answer` is ignored. */
function settledOrAborted(answer: Promise<IngestionCount>, signal: AbortSignal): Promise<Outcome> {
  handled(answer);
  return new Promise<Outcome>((resolve) => {
    if (signal.aborted) {
      resolve({ ok: false, error: signal.reason });
      return;
    }
    const onAbort = () => resolve({ ok: false, error: signal.reason });
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok: true, value });
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok: false, error });
      },
    );
  });
}

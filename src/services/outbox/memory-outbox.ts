import type { DataSource } from 'typeorm';
import type { TransactionClient } from '../../database/transaction-runner';
import { systemClock, type Clock } from '../../shared/time/clock';
import { sleep } from '../../shared/time/timeout';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { MemoryScope } from '../services.types';
import { OutboxContext } from './outbox-context';
import { enqueueJob } from './outbox-enqueue';
import { cancelOlderEpochJobs } from './outbox-erasure';
import { checkHealth, healthRecord, type HealthCounters } from './outbox-health';
import { resolveMemoryOutboxOptions, type MemoryOutboxOptions, type ResolvedMemoryOutboxOptions } from './outbox-options';
import { HeldLeases } from './outbox-leases';
import { OutboxProcessor } from './outbox-processor';
import { pruneOnce } from './outbox-prune';
import { OutboxRegistry } from './outbox-registry';
import type { OutboxDeliveryTarget, OutboxEnqueueRequest, OutboxEnqueueResult, OutboxHealthRecord } from './outbox.types';

/** What a {@link PostgresMemoryOutbox} takes besides its options. */
export interface MemoryOutboxDependencies {
  /** Timers of the loop, the lease signals and the start-up waits. @default systemClock */
  readonly clock?: Clock;
  /** Uniform in [0, 1): the retry jitter. @default Math.random */
  readonly random?: () => number;
  /** Receives `agent_runtime.memory_outbox.job`. @default none */
  readonly events?: TelemetrySink;
  /**
   * The leases whose settle has not landed, shared with the outboxes that follow this one (the
   * bundle passes one per supervisor), so a later outbox ends the rows this one left `running`.
   * @default a set of this outbox's own
   */
  readonly heldLeases?: HeldLeases;
}

type OutboxState = 'created' | 'starting' | 'running' | 'stopped';

/** Pause between health checks while `start()` waits for the database. */
const STARTUP_RETRY_MS = 250;
const NO_COUNTERS: HealthCounters = Object.freeze({ active_jobs: 0, active_bytes: 0, terminal_jobs: 0 });

/**
 * The Postgres memory outbox of a durable generation (spec 07 §6): session events enqueued as jobs
 * in `agent_runtime_memory_outbox_jobs` and delivered to the registered memory adapter at least once,
 * under leases on the database clock, by any number of instances sharing the tables.
 *
 * @example
 * const outbox = new PostgresMemoryOutbox(dataSource, { processor: { concurrency: 8 } });
 * outbox.registerAdapter('durable-local-memory-v1', memoryAdapter);
 * await outbox.start();
 * await outbox.enqueue({ appName, userId, baseJobId: `${sessionId}:${first}:${last}`, events });
 */
export class PostgresMemoryOutbox {
  /** Resolves with `runtime_service_child_down` (`component: 'memory_outbox'`) if the processor loop dies; never rejects. */
  readonly processorDied: Promise<RuntimeServiceError>;
  readonly #context: OutboxContext;
  readonly #registry = new OutboxRegistry();
  readonly #processor: OutboxProcessor;
  #state: OutboxState = 'created';
  #starting: Promise<void> | null = null;
  #last: OutboxHealthRecord | null = null;

  /** Validates `options` (spec 07 §6.2); throws `invalid_memory_outbox_config` and the other configuration codes. */
  constructor(dataSource: DataSource, options?: MemoryOutboxOptions, deps: MemoryOutboxDependencies = {}) {
    this.#context = new OutboxContext(dataSource, resolveMemoryOutboxOptions(options), deps.clock ?? systemClock, deps.random ?? Math.random, deps.events);
    this.#processor = new OutboxProcessor(this.#context, this.#registry, deps.heldLeases ?? new HeldLeases());
    this.processorDied = this.#processor.died;
  }

  /** The options with their defaults. */
  get options(): ResolvedMemoryOutboxOptions {
    return this.#context.options;
  }

  /** The attempts of a job that names none (`memoryIngestion.maxAttempts` of the durable runner spec). */
  get defaultMaxAttempts(): number {
    return this.#context.options.defaultMaxAttempts;
  }

  /** Registers the target that delivers the jobs of `adapterId`; the first registration hydrates the registry. */
  registerAdapter(adapterId: string, target: OutboxDeliveryTarget): void {
    this.#registry.register(adapterId, target);
    this.#processor.kick();
  }

  /**
   * Waits for the registry (`registry.hydrationTimeoutMs`, else `runtime_service_bundle_start_failed`
   * with reason `memory_outbox_registry_not_hydrated`) and for a passing health check
   * (`startupTimeoutMs`, else reason `runtime_service_dependency_unavailable`), then starts the
   * processor loop. Always `details.stage` `memory_outbox`. Idempotent.
   */
  start(): Promise<void> {
    this.#starting ??= this.startOnce();
    return this.#starting;
  }

  private async startOnce(): Promise<void> {
    if (this.#state !== 'created') throw startFailed('runtime_service_generation_stale');
    this.#state = 'starting';
    const { clock, options } = this.#context;
    await this.#registry.waitHydrated(options.registry.hydrationTimeoutMs, clock);
    const deadline = clock.monotonicNow() + options.startupTimeoutMs;
    while ((await this.health()).status !== 'ready') {
      const left = deadline - clock.monotonicNow();
      if (left <= 0 || this.#state !== 'starting') throw startFailed('runtime_service_dependency_unavailable');
      await sleep(Math.min(STARTUP_RETRY_MS, left), clock);
    }
    if (this.#state !== 'starting') throw startFailed('runtime_service_dependency_unavailable');
    this.#state = 'running';
    this.#processor.start();
  }

  /**
   * Enqueues a job (spec 07 §6.3): `{job_id, phase, created}`; an existing epoch-bound id returns
   * that job with `created: false`. `memory_outbox_unavailable` unless started and the last health
   * check passed; `memory_outbox_job_too_large` / `memory_outbox_capacity_reached` (`details.limit`)
   * for the caps; `runtime_service_store_unavailable` for a database failure.
   */
  async enqueue(request: OutboxEnqueueRequest): Promise<OutboxEnqueueResult> {
    if (this.#state !== 'running' || this.#last?.status !== 'ready') throw new RuntimeServiceError('memory_outbox_unavailable');
    const result = await enqueueJob(this.#context, request);
    if (result.created) this.#processor.kick();
    return result;
  }

  /** Stops claiming and aborts deliveries in flight; their leases expire and pending jobs stay for another instance. Idempotent. */
  async stop(): Promise<void> {
    this.#state = 'stopped';
    await this.#processor.stop();
    this.#last = this.stoppedRecord();
  }

  /**
   * Runs a health check (spec 07 §6.5) and caches it for {@link lastHealth}. `unavailable` before the
   * registry is hydrated, after a stop or a dead loop, and on any failed or slow step.
   */
  async health(): Promise<OutboxHealthRecord> {
    if (this.halted()) {
      this.#last = this.stoppedRecord();
      return this.#last;
    }
    const record = await checkHealth(this.#context, this.#registry.hydrated, this.#last ?? NO_COUNTERS);
    // a stop during the check wins
    this.#last = this.halted() ? this.stoppedRecord() : record;
    return this.#last;
  }

  /** The last health record, without touching the database; `null` before the first check. */
  lastHealth(): OutboxHealthRecord | null {
    return this.#last;
  }

  /**
   * For the memory adapter's erase transaction (its `onErase` hook; bound, so it can be passed as
   * it is): cancels the scope's active jobs of epochs below `epoch` on `client`, usage adjusted
   * (spec 07 §6.5). Returns how many.
   */
  readonly cancelOlderEpochJobs = (client: TransactionClient, scope: MemoryScope, epoch: number): Promise<number> =>
    cancelOlderEpochJobs(this.#context, client, scope, epoch);

  /** Calls `listener` once with `runtime_service_child_down` if the processor loop dies (the promise form is {@link processorDied}). */
  onDied(listener: (error: RuntimeServiceError) => void): void {
    void this.processorDied.then((error) => {
      try {
        listener(error);
      } catch {
        // the listener's failure is its own; the loop is dead either way
      }
    });
  }

  /** One prune batch now; the number of terminal jobs deleted. */
  pruneOnce(): Promise<number> {
    return pruneOnce(this.#context);
  }

  private halted(): boolean {
    return this.#state === 'stopped' || this.#processor.isDead;
  }

  private stoppedRecord(): OutboxHealthRecord {
    return healthRecord('unavailable', this.#registry.hydrated ? 'hydrated' : 'hydrating', this.#last ?? NO_COUNTERS, 0);
  }
}

function startFailed(reason: string): RuntimeServiceError {
  return new RuntimeServiceError('runtime_service_bundle_start_failed', { stage: 'memory_outbox', reason });
}

import * as path from 'node:path';
import { Piscina } from 'piscina';
import { frozenJsonParse } from '../../json/json-copy';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import { systemClock, type Clock } from '../../shared/time/clock';
import { EvalServiceError } from '../eval.errors';
import type { PreparedEvalRequest } from '../eval.types';
import type { ResolvedPreparationOptions } from './preparation-options';
import { PREPARATION_ERROR_CODES, PREPARATION_PROBE, type PreparationErrorCode, type PreparationLimits, type PreparationTask } from './request-preparation';
import { prewalkRequest } from './request-prewalk';

/** What a {@link RequestPreparationPool} can be given besides its options. */
export interface RequestPreparationPoolDeps {
  /** Times each preparation from submission. @default systemClock */
  readonly clock?: Clock;
  /** Absolute path of the worker module (a test points it at a fixture). @default the compiled `request-preparation.worker.js` */
  readonly filename?: string;
}

/** How long `start()` waits for the first thread to start and answer the probe. */
const START_TIMEOUT_MS = 10_000;
/** How long a thread above the first may stay idle before it is stopped. */
const IDLE_TIMEOUT_MS = 10_000;
const WORKER_FILE = 'request-preparation.worker.js';

/**
 * Worker threads run plain Node, which cannot load TypeScript (ts-jest transforms modules only inside
 * Jest's own registry), so when this module itself runs from `src/**.ts` the pool loads the build
 * output that the Jest global setup compiles, `<repo>/dist/src/evaluation/preparation/`.
 */
function defaultWorkerFilename(): string {
  if (__filename.endsWith('.ts')) return path.resolve(__dirname, '..', '..', '..', 'dist', 'src', 'evaluation', 'preparation', WORKER_FILE);
  return path.join(__dirname, WORKER_FILE);
}

/** One preparation waiting or running. */
interface PendingPreparation {
  readonly settle: (outcome: PreparedEvalRequest | EvalServiceError) => void;
  timer: unknown;
}

type PoolState = 'new' | 'starting' | 'running' | 'destroyed';

/**
 * The request preparation of spec 05 §4.2: a bounded pre-walk on the event loop, then the full
 * preparation (`prepareEvalRequest`) in a piscina pool of worker threads, each with a bounded heap.
 * At most `maxPending` preparations wait or run at once; each has `taskTimeoutMs` from submission,
 * enforced by an `AbortSignal` that makes piscina terminate the thread running it.
 *
 * @example
 * const pool = new RequestPreparationPool(resolvePreparationOptions(undefined));
 * await pool.start();
 * const prepared = await pool.prepare(request, { taskTimeoutMs: 3_600_000 });
 * await pool.destroy();
 */
export class RequestPreparationPool {
  private readonly clock: Clock;
  private readonly filename: string;
  private state: PoolState = 'new';
  private pool: Piscina | null = null;
  private readonly entries = new Set<PendingPreparation>();

  constructor(
    private readonly options: ResolvedPreparationOptions,
    deps: RequestPreparationPoolDeps = {},
  ) {
    this.clock = deps.clock ?? systemClock;
    this.filename = deps.filename ?? defaultWorkerFilename();
  }

  /**
   * Creates the pool (`maxThreads` = `threads`, one thread kept) and waits until a thread has loaded
   * the worker and answered a probe. A thread that cannot start → `evaluation_request_validation_unavailable`
   * (the pool is then released and `start` may be called again). Resolves at once when already running.
   */
  async start(): Promise<void> {
    if (this.state === 'running') return;
    if (this.state !== 'new') throw unavailable();
    this.state = 'starting';
    try {
      const pool = new Piscina({
        filename: this.filename,
        minThreads: 1,
        maxThreads: this.options.threads,
        idleTimeout: IDLE_TIMEOUT_MS,
        resourceLimits: { maxOldGenerationSizeMb: this.options.maxOldGenerationSizeMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
      });
      // a thread failing while it holds no task is replaced by piscina; without a listener the event would throw
      pool.on('error', () => undefined);
      // held from now on, so that a destroy() during the start stops these threads too
      this.pool = pool;
      const answer: unknown = await this.probe(pool);
      if (answer !== PREPARATION_PROBE || this.state !== 'starting') throw unavailable();
    } catch {
      const pool = this.pool;
      this.pool = null;
      if (this.state === 'starting') this.state = 'new';
      await pool?.destroy().catch(() => undefined);
      throw unavailable();
    }
    this.state = 'running';
  }

  /**
   * Prepares `request`: the pre-walk runs synchronously within this call (`evaluation_request_limit_exceeded`,
   * `invalid_eval_request`); then `evaluation_request_validation_unavailable` when the pool is not running,
   * `evaluation_request_validation_busy` at once when `maxPending` preparations are pending, else the
   * worker's answer: the frozen prepared request or its `EvalServiceError`. A preparation still
   * pending `taskTimeoutMs` after submission → `evaluation_request_validation_timeout` (its thread is
   * terminated); a worker killed for heap or crashing → `evaluation_request_validation_failed`.
   */
  async prepare(request: unknown, limits: PreparationLimits): Promise<PreparedEvalRequest> {
    const copy = prewalkRequest(request);
    const pool = this.pool;
    if (this.state !== 'running' || pool === null) throw unavailable();
    if (this.entries.size >= this.options.maxPending) throw new EvalServiceError('evaluation_request_validation_busy');
    return this.run(pool, { request: copy, limits: { taskTimeoutMs: limits.taskTimeoutMs } });
  }

  /** Preparations waiting or running. */
  get pending(): number {
    return this.entries.size;
  }

  /** Rejects every pending preparation with `evaluation_request_validation_unavailable` and stops the threads. Idempotent. */
  async destroy(): Promise<void> {
    this.state = 'destroyed';
    for (const entry of [...this.entries]) entry.settle(unavailable());
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }

  private run(pool: Piscina, task: PreparationTask): Promise<PreparedEvalRequest> {
    return new Promise<PreparedEvalRequest>((resolve, reject) => {
      const controller = new AbortController();
      const settle = (outcome: PreparedEvalRequest | EvalServiceError): void => {
        if (!this.entries.delete(entry)) return;
        this.clock.clearTimer(entry.timer);
        if (outcome instanceof EvalServiceError) reject(outcome);
        else resolve(outcome);
      };
      const entry: PendingPreparation = { settle, timer: undefined };
      this.entries.add(entry);
      entry.timer = this.clock.setTimer(() => {
        settle(new EvalServiceError('evaluation_request_validation_timeout'));
        controller.abort();
      }, this.options.taskTimeoutMs);
      pool.run(task, { signal: controller.signal }).then(
        (reply: unknown) => settle(fromReply(reply)),
        // an abort was already settled; anything else (heap limit, crash, exit, throw) is a failed preparation
        () => settle(failed()),
      );
    });
  }

  private probe(pool: Piscina): Promise<unknown> {
    const controller = new AbortController();
    const timer = this.clock.setTimer(() => controller.abort(), START_TIMEOUT_MS);
    return pool.run(PREPARATION_PROBE, { signal: controller.signal }).finally(() => this.clock.clearTimer(timer));
  }
}

/**
 * The worker's reply as the frozen prepared request (parsed here, in the caller's realm) or its error;
 * anything else is a failed preparation. A structured clone holds data properties only, so reading it
 * runs no user code; its objects may belong to another realm (see `PreparationReply`), so no prototype test.
 */
function fromReply(reply: unknown): PreparedEvalRequest | EvalServiceError {
  if (typeof reply !== 'object' || reply === null) return failed();
  const { ok, json, code, details } = reply as Record<string, unknown>;
  if (ok === true && typeof json === 'string') {
    try {
      return frozenJsonParse(json) as PreparedEvalRequest;
    } catch {
      return failed();
    }
  }
  if (ok === false && PREPARATION_ERROR_CODES.includes(code as PreparationErrorCode)) return new EvalServiceError(code as PreparationErrorCode, flatDetails(details));
  return failed();
}

/** The flat values of a worker's `details` (strings, numbers, booleans, `null`, lists of strings). */
function flatDetails(value: unknown): ErrorDetails | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const details: Record<string, ErrorDetails[string]> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null || typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') details[key] = item;
    else if (Array.isArray(item) && item.every((entry) => typeof entry === 'string')) details[key] = [...(item as string[])];
  }
  return Object.keys(details).length > 0 ? details : undefined;
}

const failed = (): EvalServiceError => new EvalServiceError('evaluation_request_validation_failed');
const unavailable = (): EvalServiceError => new EvalServiceError('evaluation_request_validation_unavailable');

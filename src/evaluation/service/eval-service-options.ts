import type { JsonValue } from '../../json/json.types';
import { optionFailureDetails, readOptions, readOwnData } from '../../shared/options/option-reader';
import { integerIn, oneOf } from '../../shared/options/option-rules';
import { EvalServiceError } from '../eval.errors';
import { evalOptionFailure } from '../eval-option-failure';
import type { EvalExecutor } from '../eval.types';
import { LocalEvalExecutor, type EvalRunnerRegistry } from '../executor/local-eval-executor';
import type { Clock } from '../../shared/time/clock';
import { resolvePreparationOptions, type PreparationOptions, type ResolvedPreparationOptions } from '../preparation/preparation-options';

const MiB = 1024 * 1024;

/** What `start()` does when another service owns the store (spec 05 §3). */
export type EvalOwnership = 'fail_fast' | 'standby';

/** A custom worker: an executor object exposing `start`, and a JSON config handed to each `start`. */
export interface EvalWorkerModule {
  readonly executor: EvalExecutor;
  readonly config?: JsonValue;
}

/** Options of an {@link EvalService} (spec 05 §1). Unknown keys are refused. */
export interface EvalServiceOptions {
  /** Jobs running at once, 1..256. @default 4 */
  maxConcurrency?: number;
  /** Jobs waiting in FIFO order, 0..100,000. @default 1000 */
  maxQueue?: number;
  /** Sum of `request_bytes` of queued jobs, 1..1 GiB. @default 64 MiB */
  maxQueueBytes?: number;
  /** Bound of one job from `running`, 1..86,400,000 ms. @default 3600000 */
  taskTimeoutMs?: number;
  /** How long a finished job's in-memory task entry absorbs late reports, 0..3,600,000 ms. @default 30000 */
  taskRetentionMs?: number;
  /** Bound of every public method, 1..300,000 ms (`timeout`). @default 30000 */
  callTimeoutMs?: number;
  /** `'local'` runs cases through the Runner (`LocalEvalExecutor`); or a custom executor. @default 'local' */
  worker?: 'local' | EvalWorkerModule;
  /** @default 'fail_fast' for a directly constructed service, 'standby' under `EvaluationModule` */
  ownership?: EvalOwnership;
  /** The request preparation pool. @default {maxPending: 64, taskTimeoutMs: 1000, maxOldGenerationSizeMb: 64, threads: min(4, cores)} */
  preparation?: PreparationOptions;
}

/** Options with every default applied. */
export interface ResolvedEvalServiceOptions {
  readonly maxConcurrency: number;
  readonly maxQueue: number;
  readonly maxQueueBytes: number;
  readonly taskTimeoutMs: number;
  readonly taskRetentionMs: number;
  readonly callTimeoutMs: number;
  readonly worker: 'local' | EvalWorkerModule;
  readonly ownership: EvalOwnership;
  readonly preparation: ResolvedPreparationOptions;
}

const SERVICE_RULES = {
  maxConcurrency: integerIn(1, 256),
  maxQueue: integerIn(0, 100_000),
  maxQueueBytes: integerIn(1, 1024 * MiB),
  taskTimeoutMs: integerIn(1, 86_400_000),
  taskRetentionMs: integerIn(0, 3_600_000),
  callTimeoutMs: integerIn(1, 300_000),
  // checked in depth below, with their own codes
  worker: () => true,
  ownership: oneOf('fail_fast', 'standby'),
  preparation: () => true,
};

/**
 * Validates the service options and applies the defaults: `store_is_managed` (a `store` key),
 * `unknown_eval_service_options` (every unknown key, `{field}` or `{fields}`),
 * `invalid_eval_service_options` (the first bad option, `{field}`), and the worker codes
 * `invalid_eval_worker`, `invalid_eval_worker_module`, `unknown_eval_worker_fields` (`{field}` or `{fields}`).
 */
export function resolveEvalServiceOptions(options: unknown, defaultOwnership: EvalOwnership): ResolvedEvalServiceOptions {
  const store = readOwnData(options, ['store']);
  if (store !== null && ('store' in store.values || store.accessors.length > 0)) throw new EvalServiceError('store_is_managed');
  const read = readOptions(options, SERVICE_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw evalOptionFailure(read, 'unknown_eval_service_options', 'invalid_eval_service_options');
  const values = read.values;
  return Object.freeze({
    maxConcurrency: (values.maxConcurrency as number | undefined) ?? 4,
    maxQueue: (values.maxQueue as number | undefined) ?? 1000,
    maxQueueBytes: (values.maxQueueBytes as number | undefined) ?? 64 * MiB,
    taskTimeoutMs: (values.taskTimeoutMs as number | undefined) ?? 3_600_000,
    taskRetentionMs: (values.taskRetentionMs as number | undefined) ?? 30_000,
    callTimeoutMs: (values.callTimeoutMs as number | undefined) ?? 30_000,
    worker: resolveWorker(values.worker),
    ownership: (values.ownership as EvalOwnership | undefined) ?? defaultOwnership,
    preparation: resolvePreparationOptions(values.preparation),
  });
}

function resolveWorker(worker: unknown): 'local' | EvalWorkerModule {
  if (worker === undefined || worker === 'local') return 'local';
  const own = readOwnData(worker, ['executor', 'config']);
  if (own === null) throw new EvalServiceError('invalid_eval_worker');
  if (own.unknown.length > 0) throw new EvalServiceError('unknown_eval_worker_fields', optionFailureDetails(own.unknown));
  const executor = own.values.executor as { start?: unknown } | undefined;
  let start: unknown;
  try {
    start = typeof executor === 'object' && executor !== null ? executor.start : undefined;
  } catch {
    start = undefined;
  }
  if (typeof start !== 'function') throw new EvalServiceError('invalid_eval_worker_module');
  return Object.freeze({ executor: executor as EvalExecutor, ...(own.values.config === undefined ? {} : { config: own.values.config as JsonValue }) });
}

/**
 * The executor the `worker` option names, with the config handed to each start: a `LocalEvalExecutor`
 * over `registry` for `'local'` (`invalid_eval_worker` without a registry), else the custom one.
 */
export function workerExecutor(worker: 'local' | EvalWorkerModule, registry: EvalRunnerRegistry | undefined, clock: Clock): { executor: EvalExecutor; config: JsonValue | undefined } {
  if (worker !== 'local') return { executor: worker.executor, config: worker.config };
  if (registry === undefined || typeof registry.getRunner !== 'function') throw new EvalServiceError('invalid_eval_worker');
  return { executor: new LocalEvalExecutor(registry, { clock }), config: undefined };
}

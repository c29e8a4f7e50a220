import { availableParallelism } from 'node:os';
import { integerIn } from '../../shared/options/option-rules';
import { firstFailures, optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { EvalServiceError } from '../eval.errors';

/** Options of the request preparation pool, the service's `preparation` option (spec 05 §1, §4.2). Unknown keys are refused. */
export interface PreparationOptions {
  /** Preparations waiting or running at once, 1..64; one more gets `evaluation_request_validation_busy`. @default 64 */
  maxPending?: number;
  /** Bound of one preparation from submission, 1..1000 ms (`evaluation_request_validation_timeout`). @default 1000 */
  taskTimeoutMs?: number;
  /** Heap (old generation) of each worker thread, 16..256 MiB; a worker passing it is killed (`evaluation_request_validation_failed`). @default 64 */
  maxOldGenerationSizeMb?: number;
  /** Worker threads, 1..16. @default min(4, os.availableParallelism()) */
  threads?: number;
}

/** Preparation options with every default applied. */
export interface ResolvedPreparationOptions {
  readonly maxPending: number;
  readonly taskTimeoutMs: number;
  readonly maxOldGenerationSizeMb: number;
  readonly threads: number;
}

const NAME = 'preparation';

const RULES = {
  maxPending: integerIn(1, 64),
  taskTimeoutMs: integerIn(1, 1000),
  maxOldGenerationSizeMb: integerIn(16, 256),
  threads: integerIn(1, 16),
};

/**
 * Validates the `preparation` option and applies its defaults. Every failure is
 * `invalid_eval_service_options` naming `'preparation.<key>'`: every unknown key (`{field}` or
 * `{fields}`, sorted), else the first bad value (`{field}`); `{field: 'preparation'}` when the value is
 * not a plain object. Own data properties only; no getter is called.
 *
 * @example
 * resolvePreparationOptions({ threads: 2 }); // { maxPending: 64, taskTimeoutMs: 1000, maxOldGenerationSizeMb: 64, threads: 2 }
 */
export function resolvePreparationOptions(value: unknown): ResolvedPreparationOptions {
  const read = readOptions(value, RULES, { name: NAME, unknownKeys: 'refuse' });
  if (!read.ok) {
    const whole = read.unknown.length === 0 && read.fields[0] === NAME;
    throw new EvalServiceError('invalid_eval_service_options', optionFailureDetails(whole ? [NAME] : firstFailures(read).map((key) => `${NAME}.${key}`)));
  }
  const values = read.values;
  return Object.freeze({
    maxPending: (values.maxPending as number | undefined) ?? 64,
    taskTimeoutMs: (values.taskTimeoutMs as number | undefined) ?? 1000,
    maxOldGenerationSizeMb: (values.maxOldGenerationSizeMb as number | undefined) ?? 64,
    threads: (values.threads as number | undefined) ?? defaultPreparationThreads(),
  });
}

/** `min(4, os.availableParallelism())`. */
export function defaultPreparationThreads(): number {
  return Math.min(4, availableParallelism());
}

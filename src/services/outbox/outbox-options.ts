import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn, isBoolean } from '../../shared/options/option-rules';
import { isReadableObject } from '../config-reader';
import { RuntimeServiceError, type RuntimeServiceErrorCode } from '../runtime-service.errors';

/** Options of the processor loop. */
export interface MemoryOutboxProcessorOptions {
  /** Deliveries in flight at once per outbox instance, 1..64. @default 4 */
  concurrency?: number;
}

/** Options of the adapter registry. */
export interface MemoryOutboxRegistryOptions {
  /** How long `start()` waits for the first adapter registration, 1..600,000 ms. @default 5000 */
  hydrationTimeoutMs?: number;
}

/**
 * Options of the memory outbox (the `memoryOutbox` key of the durable profile, spec 07 §6.2).
 * Unknown keys and bad values → `invalid_memory_outbox_config` naming them (`field`, or sorted
 * `fields`; a nested one as `processor.concurrency`), except `pollIntervalMs`
 * (`invalid_memory_outbox_poll_interval`) and `registry` and its keys
 * (`invalid_memory_outbox_registry_options`).
 */
export interface MemoryOutboxOptions {
  /** Active (pending, running, retry_wait) jobs of all scopes, 1..10,000,000. @default 10000 */
  maxActiveGlobal?: number;
  /** Active jobs of one memory scope, 1..10,000,000. @default 1000 */
  maxActivePerScope?: number;
  /** Event bytes (canonical JSON) of all active jobs, ≥ 1. @default 268435456 (256 MiB) */
  maxActiveBytesGlobal?: number;
  /** Event bytes of the active jobs of one scope, ≥ 1. @default 67108864 (64 MiB) */
  maxActiveBytesPerScope?: number;
  /** Events of one job, 1..100,000. @default 5000 */
  maxEventsPerJob?: number;
  /** Canonical JSON bytes of one event, 1..268,435,455. @default 262144 (256 KiB) */
  maxEventBytes?: number;
  /** Canonical JSON bytes of a job's event list, 1..268,435,455 (the largest `jsonb`). @default 16777216 (16 MiB) */
  maxJobBytes?: number;
  /** Cap of a job's `maxAttempts`, 1..10. @default 10 */
  maxAttempts?: number;
  /** Attempts of a job that names none, an integer ≥ 1 and ≤ `maxAttempts` (more, 11 included → `memory_outbox_runner_max_attempts_exceeded`). @default 5 */
  defaultMaxAttempts?: number;
  /** First retry delay, 1..3,600,000 ms; doubles per attempt. @default 250 */
  backoffBaseMs?: number;
  /** Largest retry delay (before jitter), `backoffBaseMs`..86,400,000 ms. @default 30000 */
  backoffMaxMs?: number;
  /** Lease of a claimed job, 10..3,600,000 ms (database clock). @default 30000 */
  leaseMs?: number;
  /** Age after which terminal jobs are pruned, 0..2^53 − 1 ms. @default 604800000 (7 days) */
  terminalRetentionMs?: number;
  /** Active + terminal jobs the tables may hold (every active job reserves its terminal slot), 1..100,000,000. @default 100000 */
  maxTerminalRecords?: number;
  /** Terminal jobs one prune cycle deletes, 1..100,000. @default 1000 */
  maxPruneBatch?: number;
  /** Index entries one claim cycle examines, 1..100,000. @default 1000 */
  maxClaimScan?: number;
  /** Pause between processor cycles, 1..3,600,000 ms (0 → `invalid_memory_outbox_poll_interval`). @default 500 */
  pollIntervalMs?: number;
  /** How long `start()` waits for a first passing health check, 1..600,000 ms. @default 5000 */
  startupTimeoutMs?: number;
  /** Health requires a synchronous standby (`synchronous_standby_names` set, `synchronous_commit` waiting for it). @default false */
  requireSynchronousStandby?: boolean;
  /** @default {concurrency: 4} */
  processor?: MemoryOutboxProcessorOptions;
  /** @default {hydrationTimeoutMs: 5000} */
  registry?: MemoryOutboxRegistryOptions;
}

/** Options with every default applied. */
export interface ResolvedMemoryOutboxOptions {
  readonly maxActiveGlobal: number;
  readonly maxActivePerScope: number;
  readonly maxActiveBytesGlobal: number;
  readonly maxActiveBytesPerScope: number;
  readonly maxEventsPerJob: number;
  readonly maxEventBytes: number;
  readonly maxJobBytes: number;
  readonly maxAttempts: number;
  readonly defaultMaxAttempts: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly leaseMs: number;
  readonly terminalRetentionMs: number;
  readonly maxTerminalRecords: number;
  readonly maxPruneBatch: number;
  readonly maxClaimScan: number;
  readonly pollIntervalMs: number;
  readonly startupTimeoutMs: number;
  readonly requireSynchronousStandby: boolean;
  readonly processor: { readonly concurrency: number };
  readonly registry: { readonly hydrationTimeoutMs: number };
}

/** The largest `jsonb` value Postgres stores. */
const MAX_JSONB_BYTES = 2 ** 28 - 1;
const MiB = 1024 * 1024;

const RULES: OptionRules<keyof MemoryOutboxOptions> = {
  maxActiveGlobal: integerIn(1, 10_000_000),
  maxActivePerScope: integerIn(1, 10_000_000),
  maxActiveBytesGlobal: integerIn(1),
  maxActiveBytesPerScope: integerIn(1),
  maxEventsPerJob: integerIn(1, 100_000),
  maxEventBytes: integerIn(1, MAX_JSONB_BYTES),
  maxJobBytes: integerIn(1, MAX_JSONB_BYTES),
  maxAttempts: integerIn(1, 10),
  // no upper bound of its own: above `maxAttempts` is the cross-check's `memory_outbox_runner_max_attempts_exceeded` (spec 07 §6.2)
  defaultMaxAttempts: integerIn(1),
  backoffBaseMs: integerIn(1, 3_600_000),
  backoffMaxMs: integerIn(1, 86_400_000),
  leaseMs: integerIn(10, 3_600_000),
  terminalRetentionMs: integerIn(0),
  maxTerminalRecords: integerIn(1, 100_000_000),
  maxPruneBatch: integerIn(1, 100_000),
  maxClaimScan: integerIn(1, 100_000),
  pollIntervalMs: integerIn(1, 3_600_000),
  startupTimeoutMs: integerIn(1, 600_000),
  requireSynchronousStandby: isBoolean,
  processor: isReadableObject,
  registry: isReadableObject,
};

/** The options with a code of their own; every other failing name is `invalid_memory_outbox_config`. */
const OWN_CODES: Readonly<Record<string, RuntimeServiceErrorCode>> = {
  pollIntervalMs: 'invalid_memory_outbox_poll_interval',
  registry: 'invalid_memory_outbox_registry_options',
};
/** Which code is reported when names of several codes fail. */
const CODE_ORDER: readonly RuntimeServiceErrorCode[] = ['invalid_memory_outbox_config', 'invalid_memory_outbox_poll_interval', 'invalid_memory_outbox_registry_options'];
const topLevelCode = (field: string): RuntimeServiceErrorCode => OWN_CODES[field] ?? 'invalid_memory_outbox_config';

const PROCESSOR_RULES: OptionRules<keyof MemoryOutboxProcessorOptions> = { concurrency: integerIn(1, 64) };
const REGISTRY_RULES: OptionRules<keyof MemoryOutboxRegistryOptions> = { hydrationTimeoutMs: integerIn(1, 600_000) };

/**
 * Validates the `memoryOutbox` options (spec 07 §6.2) and applies the defaults. `undefined` is
 * all defaults. Every failing name is reported at once under its code; when names of several codes
 * fail, `invalid_memory_outbox_config` is reported first, then `invalid_memory_outbox_poll_interval`,
 * then `invalid_memory_outbox_registry_options`; `processor` and `registry` are read inside once the
 * top level passes. Checked after every option passes its rule: `backoffMaxMs` ≥ `backoffBaseMs`
 * (else `invalid_memory_outbox_config`, `field: 'backoffMaxMs'`) and `defaultMaxAttempts` ≤
 * `maxAttempts` (else `memory_outbox_runner_max_attempts_exceeded`, `field: 'defaultMaxAttempts'`).
 */
export function resolveMemoryOutboxOptions(value: unknown): ResolvedMemoryOutboxOptions {
  const o = readLevel(value, RULES, '', topLevelCode) as MemoryOutboxOptions;
  const processor = readLevel(o.processor, PROCESSOR_RULES, 'processor.', () => 'invalid_memory_outbox_config') as MemoryOutboxProcessorOptions;
  const registry = readLevel(o.registry, REGISTRY_RULES, 'registry.', () => 'invalid_memory_outbox_registry_options') as MemoryOutboxRegistryOptions;
  const maxAttempts = o.maxAttempts ?? 10;
  const defaultMaxAttempts = o.defaultMaxAttempts ?? Math.min(5, maxAttempts);
  if (defaultMaxAttempts > maxAttempts) throw new RuntimeServiceError('memory_outbox_runner_max_attempts_exceeded', { field: 'defaultMaxAttempts', max_attempts: maxAttempts });
  const backoffBaseMs = o.backoffBaseMs ?? 250;
  const backoffMaxMs = o.backoffMaxMs ?? Math.max(30_000, backoffBaseMs);
  if (backoffMaxMs < backoffBaseMs) throw new RuntimeServiceError('invalid_memory_outbox_config', { field: 'backoffMaxMs' });
  return Object.freeze({
    maxActiveGlobal: o.maxActiveGlobal ?? 10_000,
    maxActivePerScope: o.maxActivePerScope ?? 1000,
    maxActiveBytesGlobal: o.maxActiveBytesGlobal ?? 256 * MiB,
    maxActiveBytesPerScope: o.maxActiveBytesPerScope ?? 64 * MiB,
    maxEventsPerJob: o.maxEventsPerJob ?? 5000,
    maxEventBytes: o.maxEventBytes ?? 256 * 1024,
    maxJobBytes: o.maxJobBytes ?? 16 * MiB,
    maxAttempts,
    defaultMaxAttempts,
    backoffBaseMs,
    backoffMaxMs,
    leaseMs: o.leaseMs ?? 30_000,
    terminalRetentionMs: o.terminalRetentionMs ?? 7 * 24 * 60 * 60 * 1000,
    maxTerminalRecords: o.maxTerminalRecords ?? 100_000,
    maxPruneBatch: o.maxPruneBatch ?? 1000,
    maxClaimScan: o.maxClaimScan ?? 1000,
    pollIntervalMs: o.pollIntervalMs ?? 500,
    startupTimeoutMs: o.startupTimeoutMs ?? 5000,
    requireSynchronousStandby: o.requireSynchronousStandby ?? false,
    processor: Object.freeze({ concurrency: processor.concurrency ?? 4 }),
    registry: Object.freeze({ hydrationTimeoutMs: registry.hydrationTimeoutMs ?? 5000 }),
  });
}

/**
 * One level of the options, read with the shared reader. Nested levels were checked readable by the
 * level above, so every failing name there is a key; each is reported with the level's `prefix`,
 * under its code, the codes in the order of {@link CODE_ORDER}.
 */
function readLevel<K extends string>(
  value: unknown,
  rules: OptionRules<K>,
  prefix: string,
  codeOf: (field: string) => RuntimeServiceErrorCode,
): { readonly [P in K]?: unknown } {
  const read = readOptions(value, rules, { name: 'memoryOutbox', unknownKeys: 'refuse' });
  if (read.ok) return read.values;
  const code = CODE_ORDER.find((candidate) => read.fields.some((field) => codeOf(field) === candidate)) as RuntimeServiceErrorCode;
  throw new RuntimeServiceError(code, optionFailureDetails(read.fields.filter((field) => codeOf(field) === code).map((field) => `${prefix}${field}`)));
}

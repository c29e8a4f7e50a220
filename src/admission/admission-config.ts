import { IsIn, ValidateBy, ValidateIf, validateSync } from 'class-validator';
import { isPlainObject, isSafeIntegerAtLeast } from '../shared/plain-object';
import { isValidId } from '../shared/id-rule';
import { AdmissionError } from './admission.errors';

/** What to do when no capacity is free: refuse at once, or wait in the bounded queue. */
export type OverflowMode = 'reject' | 'queue';

/** Configuration of an {@link AdmissionController} (spec 01 §2). Unknown keys are ignored. */
export interface AdmissionConfig {
  /** Permits held at once across all agents; safe integer > 0. @default 1024 */
  globalLimit?: number;
  /** Permits held at once by an agent without an entry in `agentLimits`; safe integer > 0. @default 64 */
  defaultAgentLimit?: number;
  /** Per-agent limits by agent id (own keys only); each a safe integer > 0. @default {} */
  agentLimits?: Record<string, number>;
  /** Default overflow behaviour; a request's own `overflow` overrides it. @default 'reject' */
  overflow?: OverflowMode;
  /** Queued requests at most; `0` makes every queue attempt `admission_queue_full`. @default 1024 */
  maxQueue?: number;
  /** Queue timeout of requests that give neither `deadline` nor `queueTimeoutMs`. @default 30000 */
  defaultQueueTimeoutMs?: number | 'infinity';
  /** Default timeout of `drain()` and of the Nest module's shutdown drain; 0..600000. @default 30000 */
  drainTimeoutMs?: number;
}

/** A validated configuration with every default applied. */
export interface ResolvedAdmissionConfig {
  readonly globalLimit: number;
  readonly defaultAgentLimit: number;
  readonly agentLimits: ReadonlyMap<string, number>;
  readonly overflow: OverflowMode;
  readonly maxQueue: number;
  /** `Infinity` for `'infinity'`. */
  readonly defaultQueueTimeoutMs: number;
  readonly drainTimeoutMs: number;
}

export const MAX_DRAIN_TIMEOUT_MS = 600_000;

/** True for a safe integer ≥ 0, `'infinity'` or `Infinity`. */
export function isTimeoutMs(value: unknown): value is number | 'infinity' {
  return value === 'infinity' || value === Infinity || isSafeIntegerAtLeast(value, 0);
}

/** True for a safe integer in 0..600000. */
export function isDrainTimeoutMs(value: unknown): value is number {
  return isSafeIntegerAtLeast(value, 0) && value <= MAX_DRAIN_TIMEOUT_MS;
}

function isAgentLimits(value: unknown): value is Record<string, number> {
  if (!isPlainObject(value)) return false;
  return Reflect.ownKeys(value).every(
    (key) => isValidId(key) && isSafeIntegerAtLeast(Object.getOwnPropertyDescriptor(value, key)?.value, 1),
  );
}

const present = (_: object, value: unknown) => value !== undefined;
const rule = (name: string, test: (value: unknown) => boolean) =>
  ValidateBy({ name, validator: { validate: test, defaultMessage: () => name } });

/**
 * The rules of spec 01 §2 as a class-validator schema. The controller and the Nest module both
 * validate with it, so the two can never disagree; `undefined` means "take the default".
 */
export class AdmissionConfigSchema {
  @ValidateIf(present) @rule('positiveSafeInteger', (v) => isSafeIntegerAtLeast(v, 1))
  globalLimit?: unknown;

  @ValidateIf(present) @rule('positiveSafeInteger', (v) => isSafeIntegerAtLeast(v, 1))
  defaultAgentLimit?: unknown;

  @ValidateIf(present) @rule('agentLimits', isAgentLimits)
  agentLimits?: unknown;

  @ValidateIf(present) @IsIn(['reject', 'queue'])
  overflow?: unknown;

  @ValidateIf(present) @rule('nonNegativeSafeInteger', (v) => isSafeIntegerAtLeast(v, 0))
  maxQueue?: unknown;

  @ValidateIf(present) @rule('timeoutMs', isTimeoutMs)
  defaultQueueTimeoutMs?: unknown;

  @ValidateIf(present) @rule('drainTimeoutMs', isDrainTimeoutMs)
  drainTimeoutMs?: unknown;
}

const CONFIG_FIELDS = [
  'globalLimit',
  'defaultAgentLimit',
  'agentLimits',
  'overflow',
  'maxQueue',
  'defaultQueueTimeoutMs',
  'drainTimeoutMs',
] as const;

/**
 * Names of the options that break the rules, in declaration order; `['config']` when the value is
 * not a plain object. Empty when the configuration is valid.
 */
export function invalidAdmissionConfigFields(config: unknown): string[] {
  if (config === undefined) return [];
  try {
    return invalidFieldsOfObject(config);
  } catch {
    // a hostile value (a throwing proxy trap) is simply not a valid configuration
    return ['config'];
  }
}

function invalidFieldsOfObject(config: unknown): string[] {
  if (!isPlainObject(config)) return ['config'];
  const schema = new AdmissionConfigSchema() as Record<string, unknown>;
  for (const field of CONFIG_FIELDS) {
    // own data only: a getter or a prototype must not feed the controller a value it did not validate
    const descriptor = Object.getOwnPropertyDescriptor(config, field);
    schema[field] = descriptor && 'value' in descriptor ? descriptor.value : descriptor ? null : undefined;
  }
  const failed = new Set(validateSync(schema).map((error) => error.property));
  return CONFIG_FIELDS.filter((field) => failed.has(field));
}

/** Validates `config` and applies the defaults; throws `invalid_admission_control_config`. */
export function resolveAdmissionConfig(config?: AdmissionConfig): ResolvedAdmissionConfig {
  const invalid = invalidAdmissionConfigFields(config);
  if (invalid.length > 0) {
    throw new AdmissionError('invalid_admission_control_config', { field: invalid[0], fields: invalid });
  }
  const c = ownData(config);
  const timeout = c.defaultQueueTimeoutMs ?? 30_000;
  return Object.freeze({
    globalLimit: c.globalLimit ?? 1024,
    defaultAgentLimit: c.defaultAgentLimit ?? 64,
    agentLimits: new Map(Object.entries(ownData(c.agentLimits)) as Array<[string, number]>),
    overflow: c.overflow ?? 'reject',
    maxQueue: c.maxQueue ?? 1024,
    defaultQueueTimeoutMs: timeout === 'infinity' ? Infinity : timeout,
    drainTimeoutMs: c.drainTimeoutMs ?? 30_000,
  });
}

/** A null-prototype copy holding only own enumerable data properties (already validated). */
function ownData<T extends object>(value: T | undefined): Partial<T> {
  const copy = Object.create(null) as Record<string, unknown>;
  if (value === undefined) return copy as Partial<T>;
  for (const key of Object.keys(value)) copy[key] = Object.getOwnPropertyDescriptor(value, key)?.value;
  return copy as Partial<T>;
}

import { optionFailureDetails, readIdRecord, readOptions, type OptionRules } from '../shared/options/option-reader';
import { integerIn, oneOf } from '../shared/options/option-rules';
import { isSafeIntegerAtLeast } from '../shared/options/plain-object';
import { AdmissionError } from './admission.errors';
import { FLOW_CONFIG_KEYS, resolveFlowConfig, type FlowControlConfig, type ResolvedFlowConfig } from './flow/flow-config';

/** What to do when no capacity is free: refuse at once, or wait in the bounded queue. */
export type OverflowMode = 'reject' | 'queue';

/**
 * Configuration of an {@link AdmissionController} (spec 01 §2, and the flow-control options of spec 09
 * §2: tenants, costs, rates, adaptive limits, priority aging). Unknown keys are ignored.
 */
export interface AdmissionConfig extends FlowControlConfig {
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
  /** The options of spec 09; `flowControl` is false when none is given (spec 01 exactly). */
  readonly flow: ResolvedFlowConfig;
  readonly flowControl: boolean;
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

/** A plain object (no Proxy) whose own keys are agent ids, each an own data property holding a safe integer ≥ 1. */
function isAgentLimits(value: unknown): value is Record<string, number> {
  return readIdRecord(value)?.every(([, limit]) => isSafeIntegerAtLeast(limit, 1)) ?? false;
}

/** The rules of spec 01 §2, one per option; `undefined` means "take the default". */
const CONFIG_RULES: OptionRules<keyof AdmissionConfig> = {
  globalLimit: integerIn(1),
  defaultAgentLimit: integerIn(1),
  agentLimits: isAgentLimits,
  overflow: oneOf('reject', 'queue'),
  maxQueue: integerIn(0),
  defaultQueueTimeoutMs: isTimeoutMs,
  drainTimeoutMs: isDrainTimeoutMs,
  // read here as given, validated by `resolveFlowConfig` with their own paths
  ...(Object.fromEntries(FLOW_CONFIG_KEYS.map((key) => [key, () => true])) as unknown as OptionRules<(typeof FLOW_CONFIG_KEYS)[number]>),
};

/** Validates `config` (unknown keys ignored) and applies the defaults; throws `invalid_admission_control_config`. */
export function resolveAdmissionConfig(config?: AdmissionConfig): ResolvedAdmissionConfig {
  const read = readOptions(config, CONFIG_RULES, { name: 'config', unknownKeys: 'ignore' });
  if (!read.ok) throw new AdmissionError('invalid_admission_control_config', optionFailureDetails(read.fields));
  const c = read.values as Partial<AdmissionConfig>;
  const timeout = c.defaultQueueTimeoutMs ?? 30_000;
  const defaultAgentLimit = c.defaultAgentLimit ?? 64;
  const agentLimits = new Map(Object.entries(c.agentLimits ?? {}));
  return Object.freeze({
    globalLimit: c.globalLimit ?? 1024,
    defaultAgentLimit,
    agentLimits,
    overflow: c.overflow ?? 'reject',
    maxQueue: c.maxQueue ?? 1024,
    defaultQueueTimeoutMs: timeout === 'infinity' ? Infinity : timeout,
    drainTimeoutMs: c.drainTimeoutMs ?? 30_000,
    flow: resolveFlowConfig(read.values, (agentId) => agentLimits.get(agentId) ?? defaultAgentLimit),
    flowControl: FLOW_CONFIG_KEYS.some((key) => read.values[key] !== undefined),
  });
}

/** The limit of `agentId`: its entry in `agentLimits`, else `defaultAgentLimit`. */
export function agentLimitOf(config: ResolvedAdmissionConfig, agentId: string): number {
  return config.agentLimits.get(agentId) ?? config.defaultAgentLimit;
}

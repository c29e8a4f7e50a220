import type { Clock } from '../shared/time/clock';
import { optionFailureDetails, readOptions, type OptionRules } from '../shared/options/option-reader';
import { integerIn } from '../shared/options/option-rules';
import { AgentRuntimeHealthError } from './health.errors';
import { DEFAULT_MINIMUM_STEP_MS, DEFAULT_SHUTDOWN_TIMEOUT_MS } from './shutdown-coordinator';

/** Injection token of the {@link AgentRuntimeHealthOptions}. */
export const AGENT_RUNTIME_HEALTH_OPTIONS = Symbol('AGENT_RUNTIME_HEALTH_OPTIONS');

/** Options of `AgentRuntimeHealthModule.forRoot`. Unknown keys → `invalid_health_options`. */
export interface AgentRuntimeHealthOptions {
  /** Time for the whole shutdown, every step included; 0..600000. @default 30000 */
  shutdownTimeoutMs?: number;
  /** Time kept for each later shutdown phase that has participants; 0..60000. @default 1000 */
  minimumStepMs?: number;
  /** Time each indicator has to answer a readiness check before it counts as down; 1..60000. @default 2000 */
  readinessTimeoutMs?: number;
  /** The clock the shutdown steps and readiness checks are bounded on. @default systemClock */
  clock?: Clock;
  /**
   * Components readiness reports without letting them fail it: their state is in `details`, never in
   * `error`. For a cluster singleton (the evaluation service) whose standby instances serve traffic
   * all the same. @default []
   */
  advisoryComponents?: readonly string[];
}

/** Options with every default applied (`clock` stays optional: the components default it). */
export interface ResolvedHealthOptions {
  readonly shutdownTimeoutMs: number;
  readonly minimumStepMs: number;
  readonly readinessTimeoutMs: number;
  readonly clock: Clock | undefined;
  readonly advisoryComponents: ReadonlySet<string>;
}

export const DEFAULT_READINESS_TIMEOUT_MS = 2000;

const isClock = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  (['monotonicNow', 'wallNow', 'setTimer', 'clearTimer'] as const).every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

const HEALTH_OPTION_RULES: OptionRules<keyof AgentRuntimeHealthOptions> = {
  shutdownTimeoutMs: integerIn(0, 600_000),
  minimumStepMs: integerIn(0, 60_000),
  readinessTimeoutMs: integerIn(1, 60_000),
  clock: isClock,
  advisoryComponents: (value: unknown) => Array.isArray(value) && value.every((component) => typeof component === 'string' && component.length > 0),
};

/** Validates the options (unknown keys refused) and applies the defaults; throws `invalid_health_options`. */
export function resolveHealthOptions(options: unknown): ResolvedHealthOptions {
  const read = readOptions(options, HEALTH_OPTION_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new AgentRuntimeHealthError('invalid_health_options', optionFailureDetails(read.fields));
  const o = read.values as AgentRuntimeHealthOptions;
  return Object.freeze({
    shutdownTimeoutMs: o.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
    minimumStepMs: o.minimumStepMs ?? DEFAULT_MINIMUM_STEP_MS,
    readinessTimeoutMs: o.readinessTimeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS,
    clock: o.clock,
    advisoryComponents: new Set(o.advisoryComponents ?? []),
  });
}

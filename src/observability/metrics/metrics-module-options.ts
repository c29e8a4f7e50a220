import { types } from 'node:util';
import type { Registry } from 'prom-client';
import { isValidId } from '../../shared/ids/id-rule';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isBoolean } from '../../shared/options/option-rules';
import { MetricsError } from './metrics.errors';

/** Injection token of the resolved `MetricsModule` options. */
export const METRICS_MODULE_OPTIONS = Symbol('METRICS_MODULE_OPTIONS');

/** Options of `MetricsModule.forRoot`. Unknown keys and bad values stop bootstrap with `invalid_metrics_options`. */
export interface MetricsModuleOptions {
  /** Route of the exposition (`GET`); not guarded by admission or policy. @default '/metrics' */
  path?: string;
  /**
   * prom-client `Registry` the metrics are registered in (and removed from at shutdown), e.g. one the
   * application also registers its own metrics in. @default a new `Registry` owned by the module
   */
  registry?: Registry;
  /** Also collect prom-client's default process metrics (`process_*`, `nodejs_*`) in that registry. @default false */
  defaultMetrics?: boolean;
  /**
   * Agent ids that keep their own `agent_id` label value, besides those of the configuration (admission
   * `agentLimits` keys, the policy's named agents, the registered runners). Every other id is `_other`.
   * @default []
   */
  agents?: readonly string[];
}

/** The options after validation (`path` is read when the module is declared). */
export interface ResolvedMetricsModuleOptions {
  readonly registry: Registry | undefined;
  readonly defaultMetrics: boolean;
  readonly agents: readonly string[];
}

/** The default route of the exposition. */
export const DEFAULT_METRICS_PATH = '/metrics';

/** A route of segments of unreserved URL characters, with a leading `/`. */
export const isMetricsPath = (value: unknown): boolean => typeof value === 'string' && /^(\/[A-Za-z0-9._~-]+)+$/.test(value);

/** A prom-client `Registry` (or one of another copy of prom-client): what the module calls on it. */
const isRegistry = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  !types.isProxy(value) &&
  ['metrics', 'getMetricsAsArray', 'registerMetric', 'removeSingleMetric'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

const isAgentList = (value: unknown): boolean => Array.isArray(value) && !types.isProxy(value) && value.every((id) => isValidId(id));

const RULES = { registry: isRegistry, defaultMetrics: isBoolean, agents: isAgentList };

/** Validates the options other than `path`. */
export function resolveMetricsModuleOptions(options: unknown): ResolvedMetricsModuleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new MetricsError('invalid_metrics_options', optionFailureDetails(read.fields));
  const { registry, defaultMetrics, agents } = read.values;
  return Object.freeze({
    registry: registry as Registry | undefined,
    defaultMetrics: (defaultMetrics as boolean | undefined) ?? false,
    agents: Object.freeze([...((agents as readonly string[] | undefined) ?? [])]),
  });
}

import { readIdRecord, readOwnData } from '../../shared/options/option-reader';
import { isPositiveFinite } from '../../shared/options/option-rules';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { AdmissionError } from '../admission.errors';
import { resolveRate, RATE_KEYS, type Rate, type ResolvedRate } from './rate-buckets';

/** AIMD settings of one agent (spec 09 §6). */
export interface AdaptiveLimitConfig {
  /** The floor of the effective limit; safe integer, 1 ≤ min ≤ the agent's static limit. */
  min: number;
  /** @default 'aimd' */
  algorithm?: 'aimd';
  /** An `overloaded` report multiplies the limit by this; 0 < r < 1. @default 0.9 */
  backoffRatio?: number;
  /** At most one decrease per this many ms; safe integer ≥ 0. @default 1000 */
  decreaseIntervalMs?: number;
}

/** Rates per scope (spec 09 §5): the global scope, agents (a default and overrides) and tenants likewise. */
export interface RatesConfig {
  /** One rate for all requests together. @default none */
  global?: Rate;
  /** The rate of each agent without an entry in `agents`. @default none */
  defaultAgent?: Rate;
  /** Rates of agents, by agent id. */
  agents?: Record<string, Rate>;
  /** The rate of each tenant without an entry in `tenants`. @default none */
  defaultTenant?: Rate;
  /** Rates of tenants, by tenant id (a tenant named here may appear in metrics). */
  tenants?: Record<string, Rate>;
}

/** The flow-control options of spec 09 §2; every one is optional, and without any the controller is spec 01's. */
export interface FlowControlConfig {
  /** Permits a tenant may hold at once across agents; safe integer > 0 or `'infinity'`. @default 'infinity' */
  defaultTenantLimit?: number | 'infinity';
  /** Per-tenant overrides of `defaultTenantLimit`, by tenant id (a tenant named here may appear in metrics). @default none */
  tenantLimits?: Record<string, number | 'infinity'>;
  /** A tenant's share in fair queueing; finite > 0. @default 1 each */
  tenantWeights?: Record<string, number>;
  /** Sum of `cost` held at once across agents; finite > 0 or `'infinity'`. @default 'infinity' */
  globalCostLimit?: number | 'infinity';
  /** Sum of `cost` each agent without an entry in `agentCostLimits` may hold at once; finite > 0 or `'infinity'`. @default 'infinity' */
  defaultAgentCostLimit?: number | 'infinity';
  /** Per-agent overrides of `defaultAgentCostLimit`, by agent id. @default none */
  agentCostLimits?: Record<string, number | 'infinity'>;
  /** Sum of `cost` each tenant without an entry in `tenantCostLimits` may hold at once, across agents; finite > 0 or `'infinity'`. @default 'infinity' */
  defaultTenantCostLimit?: number | 'infinity';
  /** Per-tenant overrides of `defaultTenantCostLimit`, by tenant id. @default none */
  tenantCostLimits?: Record<string, number | 'infinity'>;
  /** Requests and cost per minute per scope (token buckets). */
  rates?: RatesConfig;
  /** Agents whose effective limit adapts to reported overload (AIMD). */
  adaptive?: Record<string, AdaptiveLimitConfig>;
  /** A queued request moves up one class after waiting this long; safe integer > 0 or `'infinity'`. @default 10000 */
  priorityAgingMs?: number | 'infinity';
}

/** A validated adaptive setting. */
export interface ResolvedAdaptive {
  readonly min: number;
  readonly backoffRatio: number;
  readonly decreaseIntervalMs: number;
}

/** The flow-control options with their defaults; `Infinity` stands for `'infinity'`. */
export interface ResolvedFlowConfig {
  readonly defaultTenantLimit: number;
  readonly tenantLimits: ReadonlyMap<string, number>;
  readonly tenantWeights: ReadonlyMap<string, number>;
  readonly globalCostLimit: number;
  readonly defaultAgentCostLimit: number;
  readonly agentCostLimits: ReadonlyMap<string, number>;
  readonly defaultTenantCostLimit: number;
  readonly tenantCostLimits: ReadonlyMap<string, number>;
  readonly globalRate: ResolvedRate | undefined;
  readonly defaultAgentRate: ResolvedRate | undefined;
  readonly agentRates: ReadonlyMap<string, ResolvedRate>;
  readonly defaultTenantRate: ResolvedRate | undefined;
  readonly tenantRates: ReadonlyMap<string, ResolvedRate>;
  readonly adaptive: ReadonlyMap<string, ResolvedAdaptive>;
  /** `Infinity` for no aging. */
  readonly priorityAgingMs: number;
  /** Whether any tenant option is given: `status()` then has `per_tenant` and `other_tenants` (spec 09 §8). */
  readonly tenantOptions: boolean;
  /** Whether any cost limit is given: `status()` then has `cost_in_use`. */
  readonly costLimits: boolean;
  /** Tenants named in configuration: the only tenant ids telemetry and metrics may carry (spec 09 §7). */
  readonly namedTenants: ReadonlySet<string>;
}

/** The keys of {@link FlowControlConfig}, for the compatibility rule (none given: spec 01 exactly). */
export const FLOW_CONFIG_KEYS = Object.freeze([
  'defaultTenantLimit',
  'tenantLimits',
  'tenantWeights',
  'globalCostLimit',
  'defaultAgentCostLimit',
  'agentCostLimits',
  'defaultTenantCostLimit',
  'tenantCostLimits',
  'rates',
  'adaptive',
  'priorityAgingMs',
] as const);

const DEFAULT_PRIORITY_AGING_MS = 10_000;

const isInfinity = (value: unknown): boolean => value === 'infinity' || value === Infinity;
const isCountLimit = (value: unknown): boolean => isInfinity(value) || isSafeIntegerAtLeast(value, 1);
const isCostLimit = (value: unknown): boolean => isInfinity(value) || isPositiveFinite(value);
const toLimit = (value: unknown): number => (isInfinity(value) ? Infinity : (value as number));

/** Thrown with the option's path, ids replaced by `*`, so an error never carries an id or a value. */
const invalid = (field: string): AdmissionError => new AdmissionError('invalid_admission_control_config', { field });

/** The entries of an id-keyed option; throws with `field` for a non-plain object, `field.*` for a bad key. */
function readIdMap(value: unknown, field: string): Array<[string, unknown]> {
  if (readOwnData(value, []) === null) throw invalid(field);
  const entries = readIdRecord(value);
  if (entries === null) throw invalid(`${field}.*`);
  return entries;
}

/** Own data values of the known keys of a plain options object (unknown keys ignored); throws with `field` otherwise. */
function readRecord<K extends string>(value: unknown, keys: readonly K[], field: string): { readonly [P in K]?: unknown } {
  const own = readOwnData(value, keys);
  if (own === null) throw invalid(field);
  if (own.accessors.length > 0) throw invalid(`${field}.${[...own.accessors].sort()[0]}`);
  return own.values;
}

function limitMap(value: unknown, field: string, rule: (v: unknown) => boolean): Map<string, number> {
  const map = new Map<string, number>();
  if (value === undefined) return map;
  for (const [id, limit] of readIdMap(value, field)) {
    if (!rule(limit)) throw invalid(`${field}.*`);
    map.set(id, toLimit(limit));
  }
  return map;
}

function limit(value: unknown, field: string, rule: (v: unknown) => boolean): number {
  if (value === undefined) return Infinity;
  if (!rule(value)) throw invalid(field);
  return toLimit(value);
}

function rate(value: unknown, field: string): ResolvedRate | undefined {
  if (value === undefined) return undefined;
  const resolved = resolveRate(readRecord(value, RATE_KEYS, field));
  if (typeof resolved === 'string') throw invalid(`${field}.${resolved}`);
  return resolved;
}

function rateMap(value: unknown, field: string): Map<string, ResolvedRate> {
  const map = new Map<string, ResolvedRate>();
  if (value === undefined) return map;
  for (const [id, entry] of readIdMap(value, field)) map.set(id, rate(entry, `${field}.*`) as ResolvedRate);
  return map;
}

function adaptiveMap(value: unknown, staticLimitOf: (agentId: string) => number): Map<string, ResolvedAdaptive> {
  const map = new Map<string, ResolvedAdaptive>();
  if (value === undefined) return map;
  for (const [id, entry] of readIdMap(value, 'adaptive')) {
    const raw = readRecord(entry, ['min', 'algorithm', 'backoffRatio', 'decreaseIntervalMs'] as const, 'adaptive.*');
    const { min, algorithm, backoffRatio = 0.9, decreaseIntervalMs = 1000 } = raw;
    if (!isSafeIntegerAtLeast(min, 1) || min > staticLimitOf(id)) throw invalid('adaptive.*.min');
    if (algorithm !== undefined && algorithm !== 'aimd') throw invalid('adaptive.*.algorithm');
    if (typeof backoffRatio !== 'number' || !(backoffRatio > 0 && backoffRatio < 1)) throw invalid('adaptive.*.backoffRatio');
    if (!isSafeIntegerAtLeast(decreaseIntervalMs, 0)) throw invalid('adaptive.*.decreaseIntervalMs');
    map.set(id, Object.freeze({ min, backoffRatio, decreaseIntervalMs }));
  }
  return map;
}

/**
 * Validates the options of spec 09 §2 (unknown keys ignored) and applies their defaults. Throws
 * `invalid_admission_control_config {field}` with the option's path (`rates.tenants.*.burst`).
 * `staticLimitOf` is the agent limit of spec 01 (the ceiling of an adaptive limit).
 */
export function resolveFlowConfig(values: { readonly [P in (typeof FLOW_CONFIG_KEYS)[number]]?: unknown }, staticLimitOf: (agentId: string) => number): ResolvedFlowConfig {
  const aging = values.priorityAgingMs;
  if (aging !== undefined && !isInfinity(aging) && !isSafeIntegerAtLeast(aging, 1)) throw invalid('priorityAgingMs');
  const rates = values.rates === undefined ? {} : readRecord(values.rates, ['global', 'defaultAgent', 'agents', 'defaultTenant', 'tenants'] as const, 'rates');
  const tenantLimits = limitMap(values.tenantLimits, 'tenantLimits', isCountLimit);
  const tenantWeights = limitMap(values.tenantWeights, 'tenantWeights', isPositiveFinite);
  const tenantCostLimits = limitMap(values.tenantCostLimits, 'tenantCostLimits', isCostLimit);
  const tenantRates = rateMap(rates.tenants, 'rates.tenants');
  const resolved: ResolvedFlowConfig = {
    defaultTenantLimit: limit(values.defaultTenantLimit, 'defaultTenantLimit', isCountLimit),
    tenantLimits,
    tenantWeights,
    globalCostLimit: limit(values.globalCostLimit, 'globalCostLimit', isCostLimit),
    defaultAgentCostLimit: limit(values.defaultAgentCostLimit, 'defaultAgentCostLimit', isCostLimit),
    agentCostLimits: limitMap(values.agentCostLimits, 'agentCostLimits', isCostLimit),
    defaultTenantCostLimit: limit(values.defaultTenantCostLimit, 'defaultTenantCostLimit', isCostLimit),
    tenantCostLimits,
    globalRate: rate(rates.global, 'rates.global'),
    defaultAgentRate: rate(rates.defaultAgent, 'rates.defaultAgent'),
    agentRates: rateMap(rates.agents, 'rates.agents'),
    defaultTenantRate: rate(rates.defaultTenant, 'rates.defaultTenant'),
    tenantRates,
    adaptive: adaptiveMap(values.adaptive, staticLimitOf),
    priorityAgingMs: aging === undefined ? DEFAULT_PRIORITY_AGING_MS : toLimit(aging),
    tenantOptions: false,
    costLimits: false,
    namedTenants: new Set([...tenantLimits.keys(), ...tenantWeights.keys(), ...tenantCostLimits.keys(), ...tenantRates.keys()]),
  };
  return Object.freeze({
    ...resolved,
    tenantOptions:
      values.defaultTenantLimit !== undefined ||
      values.defaultTenantCostLimit !== undefined ||
      rates.defaultTenant !== undefined ||
      resolved.namedTenants.size > 0,
    costLimits:
      values.globalCostLimit !== undefined ||
      values.defaultAgentCostLimit !== undefined ||
      values.agentCostLimits !== undefined ||
      values.defaultTenantCostLimit !== undefined ||
      values.tenantCostLimits !== undefined,
  });
}

/** The scopes of a request, in the order a refusal names them (spec 09 §8): agent, tenant, global. */
export type LimitScope = 'agent' | 'tenant' | 'global';

/** Permit limit of a tenant. */
export const tenantLimitOf = (flow: ResolvedFlowConfig, tenant: string): number => flow.tenantLimits.get(tenant) ?? flow.defaultTenantLimit;
/** Weight of a tenant in fair queueing. */
export const tenantWeightOf = (flow: ResolvedFlowConfig, tenant: string): number => flow.tenantWeights.get(tenant) ?? 1;
/** Cost limit of an agent. */
export const agentCostLimitOf = (flow: ResolvedFlowConfig, agentId: string): number => flow.agentCostLimits.get(agentId) ?? flow.defaultAgentCostLimit;
/** Cost limit of a tenant. */
export const tenantCostLimitOf = (flow: ResolvedFlowConfig, tenant: string): number => flow.tenantCostLimits.get(tenant) ?? flow.defaultTenantCostLimit;
/** Rate of an agent, if any. */
export const agentRateOf = (flow: ResolvedFlowConfig, agentId: string): ResolvedRate | undefined => flow.agentRates.get(agentId) ?? flow.defaultAgentRate;
/** Rate of a tenant, if any. */
export const tenantRateOf = (flow: ResolvedFlowConfig, tenant: string): ResolvedRate | undefined => flow.tenantRates.get(tenant) ?? flow.defaultTenantRate;
/** The tenant id telemetry may carry: named tenants only (spec 09 §7). */
export const reportableTenant = (flow: ResolvedFlowConfig, tenant: string | undefined): string | undefined =>
  tenant !== undefined && flow.namedTenants.has(tenant) ? tenant : undefined;

import type { ResolvedAdmissionConfig } from '../admission-config';
import type { ResolvedFlowConfig } from '../flow/flow-config';
import { canonicalJson } from '../../json/canonical-json';
import { sha256Hex } from '../../shared/text/sha256';

/** The limits every instance of a cluster must agree on, and their fingerprint. */
export interface AdmissionConfigFingerprint {
  /** Canonical JSON of the limits (what the config row's `limits` column holds). */
  readonly limits: string;
  /** Lowercase hex SHA-256 of `limits`. */
  readonly fingerprint: string;
}

/**
 * The fingerprint of the limits that decide admission across the cluster (spec 08 §3): global and
 * default agent limit, per-agent limits, queue bound and default overflow, and (only when one is
 * given, so a spec 01 cluster keeps its fingerprint) the flow-control options of spec 09 with their
 * defaults applied. Timeouts are left out: they are each instance's own business.
 */
export function admissionConfigFingerprint(config: ResolvedAdmissionConfig): AdmissionConfigFingerprint {
  // a null-prototype object keeps an agent id such as "__proto__" an ordinary key; canonical JSON sorts the keys
  const limits = canonicalJson({
    global_limit: config.globalLimit,
    default_agent_limit: config.defaultAgentLimit,
    agent_limits: byId(config.agentLimits),
    max_queue: config.maxQueue,
    overflow: config.overflow,
    ...(config.flowControl ? { flow: flowLimits(config.flow) } : {}),
  });
  return Object.freeze({ limits, fingerprint: sha256Hex(limits) });
}

/** A map as a null-prototype object (an id such as "__proto__" stays an ordinary key), values turned JSON. */
function byId<V>(map: ReadonlyMap<string, V>, json: (value: V) => unknown = (value) => value): Record<string, unknown> {
  const object = Object.create(null) as Record<string, unknown>;
  for (const [id, value] of map) object[id] = json(value);
  return object;
}

/** `Infinity` as `'infinity'`, `undefined` as `null`: JSON holds neither. */
const num = (value: number | undefined): number | string | null => (value === undefined ? null : value === Infinity ? 'infinity' : value);

function flowLimits(flow: ResolvedFlowConfig): unknown {
  const rate = (r: ResolvedFlowConfig['globalRate']) =>
    r === undefined ? null : { requests_per_ms: num(r.requestsPerMs), burst: r.burst, cost_per_ms: num(r.costPerMs), burst_cost: num(r.burstCost) };
  return {
    default_tenant_limit: num(flow.defaultTenantLimit),
    tenant_limits: byId(flow.tenantLimits, num),
    tenant_weights: byId(flow.tenantWeights),
    global_cost_limit: num(flow.globalCostLimit),
    default_agent_cost_limit: num(flow.defaultAgentCostLimit),
    agent_cost_limits: byId(flow.agentCostLimits, num),
    default_tenant_cost_limit: num(flow.defaultTenantCostLimit),
    tenant_cost_limits: byId(flow.tenantCostLimits, num),
    rates: {
      global: rate(flow.globalRate),
      default_agent: rate(flow.defaultAgentRate),
      agents: byId(flow.agentRates, rate),
      default_tenant: rate(flow.defaultTenantRate),
      tenants: byId(flow.tenantRates, rate),
    },
    adaptive: byId(flow.adaptive, (a) => ({ min: a.min, backoff_ratio: a.backoffRatio, decrease_interval_ms: a.decreaseIntervalMs })),
    priority_aging_ms: num(flow.priorityAgingMs),
  };
}

import type { Registry } from 'prom-client';
import type { AdmissionService } from '../../admission/admission-service';
import type { AdmissionStatus } from '../../admission/admission.types';
import { OTHER_LABEL_VALUE, type LabelFold } from './label-fold';
import { scrapeGauge, type Sample } from './scrape-metric';

/** What the flow gauges read of the admission configuration (a `ResolvedAdmissionConfig` fits). */
export interface FlowLimits {
  readonly defaultAgentLimit: number;
  readonly agentLimits: ReadonlyMap<string, number>;
  readonly flow?: { readonly adaptive: ReadonlyMap<string, unknown> };
}

type Status = () => AdmissionStatus;

/**
 * The gauges of spec 09 (§6, §7), read from `status()` at scrape time: the effective limit of each
 * adaptive agent, the cost in use, and active / queued work per tenant. A tenant label carries a
 * tenant named in configuration or `_other`: every other tenant, listed or folded by `status()`,
 * adds to `_other`, so no unnamed tenant id becomes a label value and the series stay bounded.
 */
export function registerFlowMetrics(registry: Registry, admission: Pick<AdmissionService, 'status'>, limits: FlowLimits | undefined, agents: LabelFold, tenants: LabelFold): void {
  const status: Status = () => admission.status();
  const adaptive = [...(limits?.flow?.adaptive.keys() ?? [])];
  if (adaptive.length > 0) {
    // an idle agent is absent from status(): its gauge keeps the last limit seen (the static limit at start)
    const lastSeen = new Map(adaptive.map((id) => [id, limits?.agentLimits.get(id) ?? limits?.defaultAgentLimit ?? 0]));
    scrapeGauge(registry, {
      name: 'agent_runtime_admission_effective_limit',
      help: 'Effective (adaptive) concurrency limit of each agent with an adaptive limit.',
      labelNames: ['agent_id'],
      read: () => {
        const perAgent = status().per_agent;
        for (const id of adaptive) {
          const limit = perAgent[id]?.effective_limit;
          if (typeof limit === 'number') lastSeen.set(id, limit);
        }
        return [...lastSeen].map(([id, limit]) => [{ agent_id: agents.fold(id) }, limit]);
      },
    });
  }
  scrapeGauge(registry, {
    name: 'agent_runtime_admission_cost_in_use',
    help: 'Sum of the estimated cost of held permits, by agent (only with a cost limit configured).',
    labelNames: ['agent_id'],
    read: () => costInUse(status(), agents),
  });
  const perTenant = (pick: 'active' | 'queued') => () => tenantTotals(status(), pick, tenants);
  scrapeGauge(registry, { name: 'agent_runtime_admission_tenant_active', help: 'Permits held, by tenant (named tenants; every other tenant in _other).', labelNames: ['tenant_id'], read: perTenant('active') });
  scrapeGauge(registry, { name: 'agent_runtime_admission_tenant_queued', help: 'Requests waiting, by tenant (named tenants; every other tenant in _other).', labelNames: ['tenant_id'], read: perTenant('queued') });
}

function costInUse(status: AdmissionStatus, agents: LabelFold): Array<Sample<'agent_id'>> | undefined {
  if (status.cost_in_use === undefined) return undefined;
  const totals = new Map([...agents.values, OTHER_LABEL_VALUE].map((id) => [id, 0]));
  for (const [id, counts] of Object.entries(status.per_agent)) {
    const label = agents.fold(id);
    totals.set(label, (totals.get(label) ?? 0) + (counts.cost_in_use ?? 0));
  }
  return [...totals].map(([id, value]) => [{ agent_id: id }, value]);
}

function tenantTotals(status: AdmissionStatus, pick: 'active' | 'queued', tenants: LabelFold): Array<Sample<'tenant_id'>> | undefined {
  if (status.per_tenant === undefined) return undefined;
  const totals = new Map([...tenants.values, OTHER_LABEL_VALUE].map((id) => [id, 0]));
  for (const [id, counts] of Object.entries(status.per_tenant)) {
    const label = tenants.fold(id);
    totals.set(label, (totals.get(label) ?? 0) + counts[pick]);
  }
  totals.set(OTHER_LABEL_VALUE, (totals.get(OTHER_LABEL_VALUE) ?? 0) + (status.other_tenants?.[pick] ?? 0));
  return [...totals].map(([id, value]) => [{ tenant_id: id }, value]);
}

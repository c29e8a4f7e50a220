import type { Registry } from 'prom-client';
import type { AdmissionService } from '../../admission/admission-service';
import type { AdmissionStatus } from '../../admission/admission.types';
import type { EvalCapabilities } from '../../evaluation/service/eval-service';
import type { RunRegistryStatus } from '../../runner/runs/run-registry.types';
import type { TraceStoreStatus } from '../../trace/trace-store.types';
import { OTHER_LABEL_VALUE, type LabelFold } from './label-fold';
import { scrapeCounter, scrapeGauge, type Sample } from './scrape-metric';
import { registerFlowMetrics, type FlowLimits } from './flow-metrics';

/** Per-agent limits (and adaptive agents) of the admission configuration in use (a `ResolvedAdmissionConfig` fits). */
export type AdmissionLimits = FlowLimits;

/** The components whose status the scrape reads; each is optional and adds its metrics only when given. */
export interface MetricsSources {
  /** The admission controller in use (`ADMISSION_SERVICE`); a cluster controller adds `instances_live`. */
  readonly admission?: Pick<AdmissionService, 'status'>;
  /** Its limits, for the limit of agents without active or queued work. */
  readonly admissionLimits?: AdmissionLimits;
  /** The `RunRegistry`. */
  readonly runs?: { status(): RunRegistryStatus };
  /** The `TraceStore`. */
  readonly traceStore?: { status(): TraceStoreStatus };
  /** The `EvalService`. */
  readonly evaluation?: { capabilities(): EvalCapabilities };
}

const bool = (value: boolean): number => (value ? 1 : 0);

/**
 * Registers the gauges (and mirrored trace counters) read from `sources` at scrape time; `tenants`
 * are the tenant ids that keep their own `tenant_id` label value.
 */
export function registerStatusMetrics(registry: Registry, sources: MetricsSources, agents: LabelFold, tenants: LabelFold): void {
  if (sources.admission) {
    registerAdmission(registry, sources.admission, sources.admissionLimits, agents);
    registerFlowMetrics(registry, sources.admission, sources.admissionLimits, agents, tenants);
  }
  const { runs, traceStore, evaluation } = sources;
  if (runs) {
    scrapeGauge(registry, { name: 'agent_runtime_runs_active', help: 'Runs with an invocation executing in this process.', read: () => [[{}, runs.status().active]] });
    scrapeGauge(registry, { name: 'agent_runtime_runs_accepting', help: '1 while the run registry takes new runs, 0 once shutdown began.', read: () => [[{}, bool(runs.status().accepting)]] });
  }
  if (traceStore) registerTraceStore(registry, traceStore);
  if (evaluation) {
    scrapeGauge(registry, {
      name: 'agent_runtime_eval_jobs',
      help: 'Evaluation jobs of this service by phase (queued or running).',
      labelNames: ['phase'],
      read: () => {
        const capabilities = evaluation.capabilities();
        return [
          [{ phase: 'queued' }, capabilities.queued_jobs],
          [{ phase: 'running' }, capabilities.active_jobs],
        ];
      },
    });
  }
}

function registerAdmission(registry: Registry, admission: Pick<AdmissionService, 'status'>, limits: AdmissionLimits | undefined, agents: LabelFold): void {
  const perAgent = (pick: 'active' | 'queued') => (): Array<Sample<'agent_id'>> => {
    const totals = agentTotals(agents);
    for (const [id, counts] of Object.entries(admission.status().per_agent)) {
      const label = agents.fold(id);
      totals.set(label, (totals.get(label) ?? 0) + counts[pick]);
    }
    return [...totals].map(([agentId, value]) => [{ agent_id: agentId }, value]);
  };
  scrapeGauge(registry, { name: 'agent_runtime_admission_active', help: 'Permits held, by agent.', labelNames: ['agent_id'], read: perAgent('active') });
  scrapeGauge(registry, { name: 'agent_runtime_admission_queued', help: 'Requests waiting in the admission queue, by agent.', labelNames: ['agent_id'], read: perAgent('queued') });
  scrapeGauge(registry, {
    name: 'agent_runtime_admission_agent_limit',
    help: `Concurrency limit of each configured agent; ${OTHER_LABEL_VALUE} is the limit each other agent has.`,
    labelNames: ['agent_id'],
    read: () => agentLimits(admission.status(), limits, agents),
  });
  scrapeGauge(registry, { name: 'agent_runtime_admission_global_limit', help: 'Permits held at once across all agents, at most.', read: () => [[{}, admission.status().global_limit]] });
  scrapeGauge(registry, { name: 'agent_runtime_admission_max_queue', help: 'Queued requests at most.', read: () => [[{}, admission.status().max_queue]] });
  scrapeGauge(registry, { name: 'agent_runtime_admission_draining', help: '1 once admission stopped accepting (drain), else 0.', read: () => [[{}, bool(admission.status().draining)]] });
  if (instancesLive(safeStatus(admission)) !== undefined) {
    scrapeGauge(registry, {
      name: 'agent_runtime_cluster_instances_live',
      help: 'Cluster instances holding their instance lock, as this instance last saw them.',
      read: () => {
        const live = instancesLive(admission.status());
        return live === undefined ? undefined : [[{}, live]];
      },
    });
  }
}

/** Every configured agent and `_other` at 0, so their series exist before their first request. */
function agentTotals(agents: LabelFold): Map<string, number> {
  return new Map([...agents.values, OTHER_LABEL_VALUE].map((id) => [id, 0]));
}

function agentLimits(status: AdmissionStatus, limits: AdmissionLimits | undefined, agents: LabelFold): Array<Sample<'agent_id'>> {
  const samples: Array<Sample<'agent_id'>> = [];
  for (const id of agents.values) {
    const limit = status.per_agent[id]?.limit ?? limits?.agentLimits.get(id) ?? limits?.defaultAgentLimit;
    if (limit !== undefined) samples.push([{ agent_id: id }, limit]);
  }
  if (limits) samples.push([{ agent_id: OTHER_LABEL_VALUE }, limits.defaultAgentLimit]);
  return samples;
}

function registerTraceStore(registry: Registry, store: { status(): TraceStoreStatus }): void {
  const counters = () => store.status().counters;
  scrapeCounter(registry, { name: 'agent_runtime_trace_events_accepted_total', help: 'Trace events the trace store accepted.', read: () => [[{}, counters().accepted]] });
  scrapeCounter(registry, {
    name: 'agent_runtime_trace_events_rejected_total',
    help: 'Trace events the trace store refused, by reason (content policy, size, other).',
    labelNames: ['reason'],
    read: () => {
      const c = counters();
      return [
        [{ reason: 'content' }, c.content_rejected],
        [{ reason: 'oversized' }, c.oversized_rejected],
        [{ reason: 'other' }, c.rejected - c.content_rejected - c.oversized_rejected],
      ];
    },
  });
  scrapeCounter(registry, {
    name: 'agent_runtime_trace_evictions_total',
    help: 'Trace events the trace store dropped to stay within capacity or retention.',
    labelNames: ['cause'],
    read: () => {
      const c = counters();
      return [
        [{ cause: 'capacity' }, c.capacity_evictions],
        [{ cause: 'retention' }, c.retention_evictions],
      ];
    },
  });
  scrapeCounter(registry, {
    name: 'agent_runtime_trace_lifecycle_deliveries_dropped_total',
    help: 'Lifecycle deliveries the trace store dropped (too large, or no pending slot).',
    read: () => [[{}, counters().lifecycle_delivery_dropped]],
  });
  scrapeGauge(registry, { name: 'agent_runtime_trace_events_stored', help: 'Trace events held by the trace store.', read: () => [[{}, store.status().events]] });
  scrapeGauge(registry, { name: 'agent_runtime_trace_stored_bytes', help: 'Encoded bytes of the trace events held.', read: () => [[{}, store.status().encoded_bytes]] });
}

function safeStatus(admission: Pick<AdmissionService, 'status'>): AdmissionStatus | undefined {
  try {
    return admission.status();
  } catch {
    return undefined;
  }
}

/** `instances_live` of a cluster controller's status; `undefined` for a process-local one. */
function instancesLive(status: AdmissionStatus | undefined): number | undefined {
  const live = (status as { instances_live?: unknown } | undefined)?.instances_live;
  return typeof live === 'number' ? live : undefined;
}

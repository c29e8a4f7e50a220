/**
 * Flow-control metrics (spec 09 §6, §7): the tenant label of admission decisions and the gauges for
 * tenants, cost in use and effective limits, through a real Nest app and `GET /metrics`. Tenants named
 * in configuration keep their id; every other tenant is `_other`, so no unnamed tenant id is ever a
 * label value.
 */
import { randomBytes } from 'node:crypto';
import type { Permit } from '../../../src/admission/permit';
import { parseExposition, seriesOf, valueOf, type ExpositionSample } from '../../../src/observability/metrics/testing/exposition';
import { AGENT, granted, useMetricsApps } from './metrics-app';

const start = useMetricsApps();

const tenantLabelValues = (samples: readonly ExpositionSample[]) => new Set(samples.flatMap((sample) => (sample.labels.tenant_id === undefined ? [] : [sample.labels.tenant_id])));

const FLOW_CONFIG = {
  globalLimit: 20_000,
  agentLimits: { [AGENT]: 4 },
  overflow: 'queue' as const,
  maxQueue: 8,
  tenantLimits: { acme: 2 },
  tenantWeights: { globex: 2 },
  agentCostLimits: { [AGENT]: 1_000 },
  adaptive: { [AGENT]: { min: 1, decreaseIntervalMs: 0 } },
};

describe('flow-control metrics', () => {
  test('decisions carry tenant_id for named tenants only; 1,000 unnamed tenants are one _other series and never appear', async () => {
    const app = await start({ admission: FLOW_CONFIG });
    const unnamed = Array.from({ length: 1_000 }, () => `cust-${randomBytes(6).toString('hex')}`);
    app.admission.release(granted(await app.admission.submit(AGENT, { tenant: 'acme' })));
    app.admission.release(granted(await app.admission.submit(AGENT, { tenant: 'globex' })));
    for (const tenant of unnamed) app.admission.release(granted(await app.admission.submit('elsewhere', { tenant })));
    app.admission.release(granted(await app.admission.submit(AGENT)));

    const text = await app.scrapeText();
    for (const tenant of unnamed) expect(text).not.toContain(tenant);
    const samples = parseExposition(text);
    expect(seriesOf(samples, 'agent_runtime_admission_decisions_total')).toEqual({
      'agent_id=assistant,outcome=granted,tenant_id=acme': 1,
      'agent_id=assistant,outcome=released,tenant_id=acme': 1,
      'agent_id=assistant,outcome=granted,tenant_id=globex': 1,
      'agent_id=assistant,outcome=released,tenant_id=globex': 1,
      'agent_id=_other,outcome=granted,tenant_id=_other': 1_000,
      'agent_id=_other,outcome=released,tenant_id=_other': 1_000,
      'agent_id=assistant,outcome=granted,tenant_id=_other': 1,
      'agent_id=assistant,outcome=released,tenant_id=_other': 1,
    });
    expect(tenantLabelValues(samples)).toEqual(new Set(['acme', 'globex', '_other']));
  });

  test('tenant gauges show named tenants by id and fold every other tenant (listed in per_tenant or not) into _other', async () => {
    const app = await start({ admission: FLOW_CONFIG });
    const held: Permit[] = [granted(await app.admission.submit(AGENT, { tenant: 'acme', cost: 10 }))];
    const unnamed = Array.from({ length: 30 }, (_, i) => `cust-${i}-${randomBytes(4).toString('hex')}`);
    for (const tenant of unnamed) held.push(granted(await app.admission.submit('elsewhere', { tenant })));
    held.push(granted(await app.admission.submit(AGENT, { tenant: 'acme', cost: 20 })));
    // acme is at its limit of 2: its third request waits
    const waiting = (await app.admission.submit(AGENT, { tenant: 'acme', cost: 1 })) as { status: string; requestRef: string };
    expect(waiting.status).toBe('queued');

    const text = await app.scrapeText();
    for (const tenant of unnamed) expect(text).not.toContain(tenant);
    const samples = parseExposition(text);
    expect(seriesOf(samples, 'agent_runtime_admission_tenant_active')).toEqual({ 'tenant_id=acme': 2, 'tenant_id=globex': 0, 'tenant_id=_other': 30 });
    expect(seriesOf(samples, 'agent_runtime_admission_tenant_queued')).toEqual({ 'tenant_id=acme': 1, 'tenant_id=globex': 0, 'tenant_id=_other': 0 });
    expect(tenantLabelValues(samples)).toEqual(new Set(['acme', 'globex', '_other']));
    expect(app.admission.cancel(waiting.requestRef)).toBe(true);
    for (const permit of held) app.admission.release(permit);
  });

  test('cost in use per agent and the effective limit of an adaptive agent', async () => {
    const app = await start({ admission: FLOW_CONFIG });
    const first = granted(await app.admission.submit(AGENT, { cost: 300 }));
    const second = granted(await app.admission.submit(AGENT, { cost: 200 }));
    let samples = await app.scrape();
    expect(valueOf(samples, 'agent_runtime_admission_cost_in_use', { agent_id: AGENT })).toBe(500);
    expect(valueOf(samples, 'agent_runtime_admission_effective_limit', { agent_id: AGENT })).toBe(4);

    first.report({ outcome: 'overloaded', latencyMs: 12 });
    samples = await app.scrape();
    expect(valueOf(samples, 'agent_runtime_admission_effective_limit', { agent_id: AGENT })).toBe(3);
    app.admission.release(first);
    app.admission.release(second);
    samples = await app.scrape();
    expect(valueOf(samples, 'agent_runtime_admission_cost_in_use', { agent_id: AGENT })).toBe(0);
    // idle, the agent is absent from status(): the gauge keeps the last limit seen
    expect(valueOf(samples, 'agent_runtime_admission_effective_limit', { agent_id: AGENT })).toBe(3);
  });

  test('without flow options the flow gauges have no samples', async () => {
    const app = await start({});
    const samples = await app.scrape();
    expect(seriesOf(samples, 'agent_runtime_admission_tenant_active')).toEqual({});
    expect(seriesOf(samples, 'agent_runtime_admission_cost_in_use')).toEqual({});
    expect(seriesOf(samples, 'agent_runtime_admission_effective_limit')).toEqual({});
  });
});

import { randomBytes } from 'node:crypto';
import { Counter, Registry } from 'prom-client';
import { AdmissionError } from '../../../src/admission/admission.errors';
import type { Permit } from '../../../src/admission/permit';
import { TelemetryEvents } from '../../../src/telemetry/telemetry-events';
import { parseExposition, seriesOf, valueOf, type ExpositionSample } from '../../../src/observability/metrics/testing/exposition';
import { AGENT, granted, MetricsApp, useMetricsApps } from './metrics-app';

const start = useMetricsApps();

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (AdmissionError.isAgentRuntimeError(error, AdmissionError)) return error.code;
    throw error;
  }
  throw new Error('expected a throw');
}

/** Every value the `agent_id` label takes in the output. */
function agentLabelValues(samples: readonly ExpositionSample[]): Set<string> {
  return new Set(samples.flatMap((sample) => (sample.labels.agent_id === undefined ? [] : [sample.labels.agent_id])));
}

describe('GET /metrics after a scripted sequence (grant, queue, reject, deny, run complete)', () => {
  test('shows the exact counter, histogram and gauge values', async () => {
    const app = await start();
    const { admission, policy } = app;
    const first = granted(await admission.submit(AGENT));
    const queued = (await admission.submit(AGENT, { overflow: 'queue' })) as { status: string; requestRef: string };
    expect(queued.status).toBe('queued');
    expect(thrownCode(() => admission.submit(AGENT, { overflow: 'reject' }))).toBe('concurrency_limit_reached');
    admission.release(first);
    admission.release(await admission.await(queued.requestRef));
    expect(policy.checkTool('rm', { path: '/' }).outcome).toBe('deny');
    expect(await app.completeRun()).toBe('completed');

    const samples = await app.scrape();
    expect(seriesOf(samples, 'agent_runtime_admission_decisions_total')).toEqual({
      'agent_id=assistant,outcome=granted,tenant_id=_other': 3,
      'agent_id=assistant,outcome=queued,tenant_id=_other': 1,
      'agent_id=assistant,outcome=rejected,tenant_id=_other': 1,
      'agent_id=assistant,outcome=released,tenant_id=_other': 3,
    });
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_count', { agent_id: AGENT })).toBe(3);
    // the run's Runner checks the agent, then the user message and the model output as content
    expect(seriesOf(samples, 'agent_runtime_policy_decisions_total')).toEqual({
      'operation=agent_invocation,outcome=allow,reason=allowed': 1,
      'operation=content,outcome=allow,reason=allowed': 2,
      'operation=tool_call,outcome=deny,reason=not_allowed': 1,
    });
    expect(seriesOf(samples, 'agent_runtime_runner_invocations_total')).toEqual({ 'agent_id=assistant,outcome=completed,status=completed': 1 });
    expect(valueOf(samples, 'agent_runtime_runner_invocation_duration_seconds_count', { agent_id: AGENT, status: 'completed' })).toBe(1);
    expect(seriesOf(samples, 'agent_runtime_ledger_operations_total')).toEqual({});

    expect(seriesOf(samples, 'agent_runtime_admission_active')).toEqual({ 'agent_id=assistant': 0, 'agent_id=_other': 0 });
    expect(seriesOf(samples, 'agent_runtime_admission_queued')).toEqual({ 'agent_id=assistant': 0, 'agent_id=_other': 0 });
    expect(seriesOf(samples, 'agent_runtime_admission_agent_limit')).toEqual({ 'agent_id=assistant': 1, 'agent_id=_other': 64 });
    expect(valueOf(samples, 'agent_runtime_admission_global_limit')).toBe(20_000);
    expect(valueOf(samples, 'agent_runtime_admission_max_queue')).toBe(8);
    expect(valueOf(samples, 'agent_runtime_admission_draining')).toBe(0);
    expect(valueOf(samples, 'agent_runtime_runs_active')).toBe(0);
    expect(valueOf(samples, 'agent_runtime_runs_accepting')).toBe(1);
    const traceCounters = app.traceStore.status().counters;
    expect(traceCounters.accepted).toBeGreaterThan(0);
    expect(valueOf(samples, 'agent_runtime_trace_events_accepted_total')).toBe(traceCounters.accepted);
    expect(seriesOf(samples, 'agent_runtime_trace_events_rejected_total')).toEqual({ 'reason=content': 0, 'reason=oversized': 0, 'reason=other': 0 });
    expect(valueOf(samples, 'agent_runtime_trace_events_stored')).toBe(app.traceStore.status().events);
    // no cluster: the process-local controller has no instances_live
    expect(seriesOf(samples, 'agent_runtime_cluster_instances_live')).toEqual({});
  });

  test('admission gauges are read at scrape time: a held permit and a queued request show, then clear', async () => {
    const app = await start();
    const permit = granted(await app.admission.submit(AGENT));
    const queued = (await app.admission.submit(AGENT, { overflow: 'queue' })) as { requestRef: string };
    const other = granted(await app.admission.submit('unconfigured-agent'));
    const during = await app.scrape();
    expect(seriesOf(during, 'agent_runtime_admission_active')).toEqual({ 'agent_id=assistant': 1, 'agent_id=_other': 1 });
    expect(seriesOf(during, 'agent_runtime_admission_queued')).toEqual({ 'agent_id=assistant': 1, 'agent_id=_other': 0 });
    app.admission.release(permit);
    app.admission.release(await app.admission.await(queued.requestRef));
    app.admission.release(other);
    const after = await app.scrape();
    expect(seriesOf(after, 'agent_runtime_admission_active')).toEqual({ 'agent_id=assistant': 0, 'agent_id=_other': 0 });
    expect(seriesOf(after, 'agent_runtime_admission_queued')).toEqual({ 'agent_id=assistant': 0, 'agent_id=_other': 0 });
  });

  test('answers text/plain; version=0.0.4 and is not cached', async () => {
    const app = await start();
    const response = await app.get('/metrics');
    expect(response.status).toBe(200);
    // Express re-serialises the type when it sends a string (parameters sorted): compare the parameters
    const parameters = (type: string | null) => (type ?? '').split(';').map((part) => part.trim()).sort();
    expect(parameters(response.headers.get('content-type'))).toEqual(parameters(new Registry().contentType));
    expect(parameters(response.headers.get('content-type'))).toEqual(['charset=utf-8', 'text/plain', 'version=0.0.4']);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const text = await response.text();
    expect(parseExposition(text).length).toBeGreaterThan(0);
  });
});

describe('bounded label cardinality', () => {
  test('10,000 distinct unconfigured agent ids fold into one label value, not 10,000 series', async () => {
    const app = await start();
    for (let i = 0; i < 10_000; i++) app.admission.release(granted(await app.admission.submit(`tenant-agent-${i}`)));
    const samples = await app.scrape();
    expect(seriesOf(samples, 'agent_runtime_admission_decisions_total')).toEqual({ 'agent_id=_other,outcome=granted,tenant_id=_other': 10_000, 'agent_id=_other,outcome=released,tenant_id=_other': 10_000 });
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_count', { agent_id: '_other' })).toBe(10_000);
    expect(agentLabelValues(samples)).toEqual(new Set([AGENT, '_other']));
    expect(samples.filter((sample) => sample.name === 'agent_runtime_admission_queue_wait_seconds_count')).toHaveLength(1);
  });

  test('agents named by the policy and by the option keep their own label value', async () => {
    const app = await start({ metrics: { agents: ['listed-by-option'] }, policy: { agents: { allow: [AGENT, 'allowed-by-policy'], deny: ['denied-by-policy'] } } });
    for (const id of ['listed-by-option', 'allowed-by-policy', 'denied-by-policy', 'nobody']) app.admission.release(granted(await app.admission.submit(id)));
    const samples = await app.scrape();
    expect(Object.keys(seriesOf(samples, 'agent_runtime_admission_decisions_total')).filter((key) => key.includes('outcome=granted'))).toEqual([
      'agent_id=listed-by-option,outcome=granted,tenant_id=_other',
      'agent_id=allowed-by-policy,outcome=granted,tenant_id=_other',
      'agent_id=denied-by-policy,outcome=granted,tenant_id=_other',
      'agent_id=_other,outcome=granted,tenant_id=_other',
    ]);
    expect(agentLabelValues(samples)).toEqual(new Set([AGENT, 'listed-by-option', 'allowed-by-policy', 'denied-by-policy', '_other']));
  });
});

describe('content-free labels', () => {
  test('no principal, session id, user id, request ref, argument, message or forged code reaches the output', async () => {
    const canary = `canary-${randomBytes(8).toString('hex')}`;
    const app = await start({ tracePrincipal: `${canary}-principal` });
    const submitted = (await app.admission.submit(`${canary}-agent`)) as { requestRef: string; permit: Permit };
    app.admission.release(submitted.permit);
    app.policy.checkTool(`${canary}-tool`, { argument: `${canary}-argument` });
    app.policy.checkAgent(`${canary}-agent`, `${canary}-content`);
    expect(await app.completeRun({ userId: `${canary}-user`, sessionId: `${canary}-session`, message: `${canary} message` })).toBe('completed');
    const forged = { agent_id: canary, tenant_id: canary, outcome: canary, operation: canary, reason: canary, from: canary, to: canary, wait_ms: 1, duration_ms: 1 };
    for (const event of Object.values(TelemetryEvents)) app.events.emit(event, forged);

    const text = await app.scrapeText();
    expect(text).not.toContain(canary);
    expect(text).not.toContain(submitted.requestRef);
    expect(text).not.toContain(submitted.permit.id);
    const samples = parseExposition(text);
    expect(valueOf(samples, 'agent_runtime_admission_decisions_total', { agent_id: '_other', tenant_id: '_other', outcome: '_other' })).toBe(1);
    expect(valueOf(samples, 'agent_runtime_policy_decisions_total', { operation: '_other', outcome: '_other', reason: '_other' })).toBe(1);
    expect(valueOf(samples, 'agent_runtime_ledger_operations_total', { operation: '_other', outcome: '_other' })).toBe(1);
    expect(valueOf(samples, 'agent_runtime_runner_invocations_total', { agent_id: '_other', status: 'failed', outcome: '_other' })).toBe(1);
    expect(valueOf(samples, 'agent_runtime_eval_job_transitions_total', { from: '_other', to: '_other' })).toBe(1);
  });
});

describe('the route', () => {
  test('is not guarded by admission or policy, even when both are bound globally', async () => {
    const app = await start({ globalGuards: true });
    expect((await app.get('/ping')).status).toBe(200);
    await app.scrapeText();
    const samples = await app.scrape();
    expect(seriesOf(samples, 'agent_runtime_admission_decisions_total')).toEqual({});
    expect(seriesOf(samples, 'agent_runtime_policy_decisions_total')).toEqual({});
  });

  test('option path moves the exposition', async () => {
    const app = await start({ metrics: { path: '/internal/metrics' } });
    expect((await app.get('/metrics')).status).toBe(404);
    expect(await app.scrapeText('/internal/metrics')).toContain('agent_runtime_admission_decisions_total');
  });

  test('a bad option stops bootstrap with invalid_metrics_options naming it', async () => {
    for (const [metrics, field] of [
      [{ path: 'metrics' }, 'path'],
      [{ defaultMetrics: 'yes' }, 'defaultMetrics'],
      [{ registry: {} }, 'registry'],
      [{ agents: ['ok', ''] }, 'agents'],
      [{ extra: 1 }, 'extra'],
    ] as const) {
      await expect(MetricsApp.start({ metrics: metrics as never })).rejects.toMatchObject({ name: 'MetricsError', code: 'invalid_metrics_options', details: { field } });
    }
  });
});

describe('registries', () => {
  test('the app may pass its own registry: its metrics are served beside ours, and ours leave it at shutdown', async () => {
    const registry = new Registry();
    const own = new Counter({ name: 'app_orders_total', help: 'Orders.', registers: [registry] });
    own.inc(2);
    const app = await start({ metrics: { registry } });
    const samples = await app.scrape();
    expect(valueOf(samples, 'app_orders_total')).toBe(2);
    expect(samples.some((sample) => sample.name.startsWith('agent_runtime_'))).toBe(true);
    await app.close();
    expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual(['app_orders_total']);
  });

  test('two apps in one process keep separate registries', async () => {
    const one = await start();
    const two = await start();
    one.admission.release(granted(await one.admission.submit(AGENT)));
    expect(valueOf(await one.scrape(), 'agent_runtime_admission_decisions_total', { agent_id: AGENT, tenant_id: '_other', outcome: 'granted' })).toBe(1);
    expect(seriesOf(await two.scrape(), 'agent_runtime_admission_decisions_total')).toEqual({});
  });

  test('default process metrics only with defaultMetrics: true', async () => {
    const without = await start();
    const withDefaults = await start({ metrics: { defaultMetrics: true } });
    expect(seriesOf(await without.scrape(), 'process_cpu_user_seconds_total')).toEqual({});
    expect(valueOf(await withDefaults.scrape(), 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });
});

describe('telemetry subscription', () => {
  test('listens from module init and stops listening at shutdown', async () => {
    const app = await start();
    const events = app.events;
    // the events metrics count; the bundle's generation and outbox events have no metric
    const counted = [TelemetryEvents.admissionDecision, TelemetryEvents.policyDecision, TelemetryEvents.ledgerOperation, TelemetryEvents.runnerInvocation, TelemetryEvents.evaluationJob];
    expect(counted.map((event) => events.listenerCount(event))).toEqual([1, 1, 1, 1, 1]);
    expect(events.listenerCount(TelemetryEvents.servicesGeneration) + events.listenerCount(TelemetryEvents.memoryOutboxJob)).toBe(0);
    await app.close();
    expect(counted.map((event) => events.listenerCount(event))).toEqual([0, 0, 0, 0, 0]);
  });
});

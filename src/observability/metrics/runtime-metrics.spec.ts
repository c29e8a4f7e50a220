import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { AdmissionController } from '../../admission/admission-controller';
import type { AdmissionStatus } from '../../admission/admission.types';
import { RuntimeMetrics } from './runtime-metrics';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import { ManualClock } from '../../shared/time/manual-clock';
import { observability } from '../../trace/testing/trace-store-fixture';
import { TraceStore } from '../../trace/trace-store';
import { parseExposition, seriesOf, valueOf } from './testing/exposition';

const scrape = async (metrics: RuntimeMetrics) => parseExposition(await metrics.metrics());

describe('telemetry counters and histograms (framework-free core)', () => {
  test('queue wait: the time from submit to grant lands in its bucket, in seconds', async () => {
    const clock = new ManualClock();
    const metrics = new RuntimeMetrics({ agents: ['a'] });
    const admission = new AdmissionController({ agentLimits: { a: 1 }, overflow: 'queue' }, { clock, events: metrics });
    const first = admission.submit('a') as { permit: Parameters<AdmissionController['release']>[0] };
    const queued = admission.submit('a') as { requestRef: string };
    clock.advance(1500);
    admission.release(first.permit);
    admission.release(await admission.await(queued.requestRef));
    const samples = await scrape(metrics);
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_count', { agent_id: 'a' })).toBe(2);
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_sum', { agent_id: 'a' })).toBe(1.5);
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_bucket', { agent_id: 'a', le: '0.005' })).toBe(1);
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_bucket', { agent_id: 'a', le: '1' })).toBe(1);
    expect(valueOf(samples, 'agent_runtime_admission_queue_wait_seconds_bucket', { agent_id: 'a', le: '2.5' })).toBe(2);
  });

  test('runner outcomes map to run statuses; durations are observed in seconds', async () => {
    const metrics = new RuntimeMetrics({ agents: ['a'] });
    for (const [outcome, duration_ms] of [['completed', 200], ['paused', 100], ['timeout', 5000], ['cancelled', 50], ['model_failed', 10], ['internal_error', 10]] as const) {
      metrics.emit(TelemetryEvents.runnerInvocation, { agent_id: 'a', outcome, duration_ms, model_calls: 1, tool_calls: 0, policy_denials: 0 });
    }
    const samples = await scrape(metrics);
    expect(seriesOf(samples, 'agent_runtime_runner_invocations_total')).toEqual({
      'agent_id=a,outcome=completed,status=completed': 1,
      'agent_id=a,outcome=paused,status=paused': 1,
      'agent_id=a,outcome=timeout,status=timed_out': 1,
      'agent_id=a,outcome=cancelled,status=cancelled': 1,
      'agent_id=a,outcome=model_failed,status=failed': 1,
      'agent_id=a,outcome=internal_error,status=failed': 1,
    });
    expect(valueOf(samples, 'agent_runtime_runner_invocation_duration_seconds_sum', { agent_id: 'a', status: 'timed_out' })).toBe(5);
    expect(valueOf(samples, 'agent_runtime_runner_invocation_duration_seconds_count', { agent_id: 'a', status: 'failed' })).toBe(2);
  });

  test('ledger operations by operation and outcome, with their duration; eval transitions by phases', async () => {
    const metrics = new RuntimeMetrics();
    metrics.emit(TelemetryEvents.ledgerOperation, { operation: 'create_and_claim', outcome: 'ok', duration_ms: 4, phase: 'running' });
    metrics.emit(TelemetryEvents.ledgerOperation, { operation: 'finish', outcome: 'stale_owner', duration_ms: 2, phase: null });
    metrics.emit(TelemetryEvents.ledgerOperation, { operation: 'renew', outcome: 'invalid_renew_arguments', duration_ms: 0, phase: null });
    metrics.emit(TelemetryEvents.evaluationJob, { from: 'queued', to: 'running', revision: 2, reason: null, duration_ms: 5, active_jobs: 1, queued_jobs: 0 });
    metrics.emit(TelemetryEvents.evaluationJob, { from: 'running', to: 'failed', revision: 3, reason: 'task-reason-text', duration_ms: 5, active_jobs: 0, queued_jobs: 0 });
    const text = await metrics.metrics();
    const samples = parseExposition(text);
    expect(seriesOf(samples, 'agent_runtime_ledger_operations_total')).toEqual({
      'operation=create_and_claim,outcome=ok': 1,
      'operation=finish,outcome=stale_owner': 1,
      'operation=renew,outcome=invalid_renew_arguments': 1,
    });
    expect(valueOf(samples, 'agent_runtime_ledger_operation_duration_seconds_sum', { operation: 'create_and_claim' })).toBe(0.004);
    expect(seriesOf(samples, 'agent_runtime_eval_job_transitions_total')).toEqual({ 'from=queued,to=running': 1, 'from=running,to=failed': 1 });
    // an eval job's reason is an open string: it is never a label
    expect(text).not.toContain('task-reason-text');
  });

  test('a payload that is not an object, or throws when read, is ignored and never throws to the emitter', async () => {
    const metrics = new RuntimeMetrics();
    const throwing = {};
    for (const field of ['agent_id', 'outcome', 'operation', 'reason', 'from', 'to', 'wait_ms', 'duration_ms']) {
      Object.defineProperty(throwing, field, {
        get() {
          throw new Error('boom');
        },
      });
    }
    const proxy = new Proxy({}, { get: () => { throw new Error('trap'); } });
    for (const payload of [null, 'text', 42, throwing, proxy]) {
      for (const event of Object.values(TelemetryEvents)) expect(() => metrics.emit(event, payload as object)).not.toThrow();
    }
    metrics.emit('agent_runtime.unknown', { outcome: 'granted' });
    const samples = await scrape(metrics);
    expect(samples.filter((sample) => sample.name.endsWith('_total'))).toEqual([]);
  });

  test('subscribe listens on any emitter until its unsubscribe; close stops every subscription', async () => {
    const metrics = new RuntimeMetrics();
    const emitter = new EventEmitter();
    const unsubscribe = metrics.subscribe(emitter);
    emitter.emit(TelemetryEvents.policyDecision, { operation: 'tool_call', outcome: 'deny', reason: 'explicitly_denied', policy_id: 'p', limit_bytes: 1 });
    unsubscribe();
    emitter.emit(TelemetryEvents.policyDecision, { operation: 'tool_call', outcome: 'deny', reason: 'explicitly_denied', policy_id: 'p', limit_bytes: 1 });
    expect(valueOf(await scrape(metrics), 'agent_runtime_policy_decisions_total', { operation: 'tool_call', outcome: 'deny', reason: 'explicitly_denied' })).toBe(1);
    metrics.subscribe(emitter);
    expect(emitter.listenerCount(TelemetryEvents.policyDecision)).toBe(1);
    metrics.close();
    expect(emitter.listenerCount(TelemetryEvents.policyDecision)).toBe(0);
  });
});

describe('scrape-time gauges (framework-free core)', () => {
  const baseStatus = (extra: Record<string, unknown> = {}): AdmissionStatus =>
    Object.freeze({ draining: false, drain_started_at: null, global_limit: 4, max_queue: 2, active: 0, available: 4, queue_length: 0, overflow: 'reject', per_agent: {}, ...extra }) as AdmissionStatus;

  test('a cluster controller status adds agent_runtime_cluster_instances_live, read at each scrape', async () => {
    let live = 3;
    const metrics = new RuntimeMetrics({ sources: { admission: { status: () => baseStatus({ instances_live: live }) } } });
    expect(valueOf(await scrape(metrics), 'agent_runtime_cluster_instances_live')).toBe(3);
    live = 2;
    expect(valueOf(await scrape(metrics), 'agent_runtime_cluster_instances_live')).toBe(2);
    const local = new RuntimeMetrics({ sources: { admission: { status: () => baseStatus() } } });
    expect(seriesOf(await scrape(local), 'agent_runtime_cluster_instances_live')).toEqual({});
  });

  test('eval jobs by phase come from the service capabilities', async () => {
    const metrics = new RuntimeMetrics({ sources: { evaluation: { capabilities: () => ({ queued_jobs: 5, active_jobs: 2 }) as never } } });
    expect(seriesOf(await scrape(metrics), 'agent_runtime_eval_jobs')).toEqual({ 'phase=queued': 5, 'phase=running': 2 });
  });

  test('trace store counters mirror its status; a closed store keeps the last values and the scrape still answers', async () => {
    const store = new TraceStore();
    const metrics = new RuntimeMetrics({ sources: { traceStore: store } });
    store.appendObservability('principal-1', observability('run-1'));
    expect(() => store.appendObservability('principal-1', { not: 'an event' })).toThrow();
    const accepted = store.status().counters.accepted;
    expect(accepted).toBe(1);
    const open = await scrape(metrics);
    expect(valueOf(open, 'agent_runtime_trace_events_accepted_total')).toBe(1);
    expect(valueOf(open, 'agent_runtime_trace_events_rejected_total', { reason: 'other' })).toBe(1);
    store.close();
    expect(valueOf(await scrape(metrics), 'agent_runtime_trace_events_accepted_total')).toBe(accepted);
  });

  test('close removes exactly its metrics from a shared registry, so a new instance can register again', () => {
    const registry = new Registry();
    const first = new RuntimeMetrics({ registry, defaultMetrics: true });
    expect(registry.getMetricsAsArray().some((metric) => metric.name === 'process_cpu_user_seconds_total')).toBe(true);
    first.close();
    expect(registry.getMetricsAsArray()).toEqual([]);
    expect(() => new RuntimeMetrics({ registry }).close()).not.toThrow();
  });
});

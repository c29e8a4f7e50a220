import { EvalServiceError } from '../../src/evaluation/eval.errors';
import type { EvalPhase, EvalStore } from '../../src/evaluation/eval.types';
import type { EvalService } from '../../src/evaluation/service/eval-service';
import type { PostgresEvalStore } from '../../src/evaluation/store/postgres-eval-store';
import { EvalServiceHarness, evalRequest, eventually, rejection as thrown, slowModel } from '../support/eval-service-harness';

const APP = { app: 'eval-app' };
const OTHER = { app: 'other-app' };

let t: EvalServiceHarness;
beforeEach(async () => {
  t = await EvalServiceHarness.create();
});
afterEach(async () => {
  await t.close();
});

const codeOf = async (work: Promise<unknown>): Promise<string | undefined> => {
  const error = await thrown(work);
  return EvalServiceError.isEvalServiceError(error) ? error.code : `not an EvalServiceError: ${String(error)}`;
};
const phaseOf = (service: EvalService, jobId: string, scope = APP) => service.status(scope, jobId).then((job) => job.phase);
const settled = (service: EvalService, jobId: string) =>
  eventually(async () => {
    const job = await service.status(APP, jobId);
    return job.phase === 'queued' || job.phase === 'running' ? undefined : job;
  });
const count = async (table: string) => Number((await t.sql(`SELECT count(*)::int AS n FROM agent_runtime_eval_${table}`))[0].n);

/** A store wrapper whose chosen operations fail, as a database outage would. */
function failing(store: PostgresEvalStore, fails: (operation: string, args: unknown[]) => boolean): EvalStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (fails(String(property), args)) return Promise.reject(new EvalServiceError('eval_store_unavailable', { sqlstate: '08006' }));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as unknown as EvalStore;
}

describe('submit → running → completed (spec 05 §4, §7)', () => {
  it('a scripted agent that meets the set completes with revision 2 and passed: true', async () => {
    const service = await t.started();
    const submitted = await service.submit(APP, evalRequest('good', { metadata: { owner: 'qa', api_token: 'secret-canary' } }));
    expect(submitted.phase).toBe('running');
    expect(submitted.revision).toBe(1);
    expect(submitted.metadata).toEqual({ owner: 'qa', api_token: '[redacted]' });
    const job = await settled(service, submitted.job_id);
    expect(job).toMatchObject({ phase: 'completed', revision: 2, reason: null, scope: APP, eval_set_id: 'set-a', eval_set_version: '1', agent: 'good' });
    expect(job.finished_at_ms).not.toBeNull();
    const result = await service.result(APP, submitted.job_id);
    expect(result.passed).toBe(true);
    expect(result.metrics).toEqual({ response_match: { score: 1, threshold: 0.8, passed: true }, tool_trajectory: { score: 1, threshold: 1, passed: true } });
    expect(result.cases.map((c) => c.case_id)).toEqual(['case-0', 'case-1']);
    expect(JSON.stringify(await t.sql('SELECT metadata FROM agent_runtime_eval_jobs'))).not.toContain('secret-canary');
  });

  it('a failing agent gives passed: false with per-metric scores', async () => {
    const service = await t.started();
    const { job_id } = await service.submit(APP, evalRequest('bad'));
    expect((await settled(service, job_id)).phase).toBe('completed');
    const result = await service.result(APP, job_id);
    expect(result.passed).toBe(false);
    expect(result.metrics.tool_trajectory).toEqual({ score: 0, threshold: 1, passed: false });
    expect(result.metrics.response_match.passed).toBe(false);
    expect(result.metrics.response_match.score).toBeLessThan(0.8);
  });

  it('baselines only for completed jobs; another scope sees not_found', async () => {
    const service = await t.started({ taskTimeoutMs: 200 });
    const done = await service.submit(APP, evalRequest('good'));
    await settled(service, done.job_id);
    const baseline = await service.putBaseline(APP, { evalSetId: 'set-a', name: 'main', jobId: done.job_id });
    expect(baseline).toMatchObject({ eval_set_id: 'set-a', name: 'main', job_id: done.job_id });
    expect((await service.getBaseline(APP, 'set-a', 'main')).result.passed).toBe(true);
    const timedOut = await service.submit(APP, evalRequest('slow', { setId: 'set-a', version: '1' }));
    expect((await settled(service, timedOut.job_id)).phase).toBe('timed_out');
    expect(await codeOf(service.putBaseline(APP, { evalSetId: 'set-a', name: 'main', jobId: timedOut.job_id }))).toBe('eval_job_not_completed');
    expect(await codeOf(service.status(OTHER, done.job_id))).toBe('not_found');
    expect(await codeOf(service.result(OTHER, done.job_id))).toBe('not_found');
    expect(await codeOf(service.cancel(OTHER, done.job_id))).toBe('not_found');
    expect(await codeOf(service.getBaseline(OTHER, 'set-a', 'main'))).toBe('not_found');
    expect((await service.listJobs(OTHER)).items).toEqual([]);
  });

  it('an unknown agent is refused before anything is written', async () => {
    const service = await t.started();
    expect(await codeOf(service.submit(APP, evalRequest('nobody')))).toBe('unknown_eval_agent');
    expect(await count('jobs')).toBe(0);
    expect(await count('set_revisions')).toBe(0);
  });
});

describe('bounds (spec 05 §4.3)', () => {
  it('concurrency 1 and max queue 1: the third submit is evaluation_queue_full and creates no row', async () => {
    const service = await t.started({ maxConcurrency: 1, maxQueue: 1 });
    const first = await service.submit(APP, evalRequest('slow'));
    const second = await service.submit(APP, evalRequest('slow'));
    expect([first.phase, second.phase]).toEqual(['running', 'queued']);
    expect(await codeOf(service.submit(APP, evalRequest('slow', { setId: 'set-b' })))).toBe('evaluation_queue_full');
    expect(await count('jobs')).toBe(2);
    expect(await count('set_revisions')).toBe(1);
    expect(service.capabilities()).toMatchObject({ active_jobs: 1, queued_jobs: 1 });
  });

  it('the queue byte bound refuses likewise', async () => {
    // one two-case request is about 460 canonical bytes: one fits in 700, two do not
    const service = await t.started({ maxConcurrency: 1, maxQueue: 10, maxQueueBytes: 700 });
    await service.submit(APP, evalRequest('slow'));
    const queued = await service.submit(APP, evalRequest('slow'));
    const bytes = service.capabilities().queued_bytes;
    expect(bytes).toBeGreaterThan(350);
    expect(bytes).toBeLessThanOrEqual(700);
    expect(await codeOf(service.submit(APP, evalRequest('slow', { setId: 'set-b' })))).toBe('evaluation_queue_full');
    expect(queued.phase).toBe('queued');
    expect(await count('jobs')).toBe(2);
  });

  it('store capacity: eval_job_capacity_reached and no orphan set revision', async () => {
    const store = await t.dataSource();
    const { PostgresEvalStore } = await import('../../src/evaluation/store/postgres-eval-store');
    const { EvalService } = await import('../../src/evaluation/service/eval-service');
    const service = new EvalService({ store: new PostgresEvalStore(store, { maxJobs: 1 }), registry: t.registry.registry }, { preparation: { threads: 1 } });
    t.track(service);
    await service.start();
    await settled(service, (await service.submit(APP, evalRequest('good'))).job_id);
    expect(await codeOf(service.submit(APP, evalRequest('good', { setId: 'set-new' })))).toBe('eval_job_capacity_reached');
    expect(await count('jobs')).toBe(1);
    expect((await t.sql("SELECT eval_set_id FROM agent_runtime_eval_set_revisions")).map((r) => r.eval_set_id)).toEqual(['set-a']);
    expect(service.capabilities()).toMatchObject({ active_jobs: 0, queued_jobs: 0 });
  });

  it('a queued job starts when the running one finishes (FIFO)', async () => {
    const service = await t.started({ maxConcurrency: 1, maxQueue: 5 });
    const jobs = [];
    for (let i = 0; i < 3; i += 1) jobs.push(await service.submit(APP, evalRequest('good')));
    expect(jobs.map((job) => job.phase)).toEqual(['running', 'queued', 'queued']);
    const finished = [];
    for (const job of jobs) finished.push(await settled(service, job.job_id));
    expect(finished.map((job) => job.phase)).toEqual(['completed', 'completed', 'completed']);
    const started = finished.map((job) => job.started_at_ms as number);
    expect([...started].sort((a, b) => a - b)).toEqual(started);
  });
});

describe('lifecycle (spec 05 §5, §6)', () => {
  it('cancel queued → cancelled with user_cancelled, revision 1', async () => {
    const service = await t.started({ maxConcurrency: 1 });
    await service.submit(APP, evalRequest('slow'));
    const queued = await service.submit(APP, evalRequest('slow'));
    const cancelled = await service.cancel(APP, queued.job_id);
    expect(cancelled).toMatchObject({ phase: 'cancelled', reason: 'user_cancelled', revision: 1 });
    expect(service.capabilities().queued_jobs).toBe(0);
  });

  it('cancel running aborts the Runner work and persists cancelled', async () => {
    const service = await t.started();
    const calls = slowModel.calls;
    const before = slowModel.aborts;
    const running = await service.submit(APP, evalRequest('slow'));
    await eventually(() => (slowModel.calls > calls ? true : undefined));
    const reply = await service.cancel(APP, running.job_id);
    expect(reply.phase).toBe('running');
    const job = await settled(service, running.job_id);
    expect(job).toMatchObject({ phase: 'cancelled', reason: 'user_cancelled', revision: 2 });
    expect(slowModel.aborts).toBeGreaterThan(before);
    expect(service.capabilities().active_jobs).toBe(0);
  });

  it('cancel terminal → already_terminal; result of a non-completed job → evaluation_job_terminal', async () => {
    const service = await t.started();
    const { job_id } = await service.submit(APP, evalRequest('good'));
    await settled(service, job_id);
    const error = await thrown(service.cancel(APP, job_id));
    expect(error).toMatchObject({ code: 'already_terminal', details: { phase: 'completed' } });
    const slow = await service.submit(APP, evalRequest('slow'));
    expect(await codeOf(service.result(APP, slow.job_id))).toBe('result_not_ready');
    await service.cancel(APP, slow.job_id);
    await settled(service, slow.job_id);
    expect(await thrown(service.result(APP, slow.job_id))).toMatchObject({ code: 'evaluation_job_terminal', details: { phase: 'cancelled', reason: 'user_cancelled' } });
  });

  it('taskTimeoutMs → timed_out with deadline_exceeded', async () => {
    const service = await t.started({ taskTimeoutMs: 150 });
    const { job_id } = await service.submit(APP, evalRequest('slow'));
    expect(await settled(service, job_id)).toMatchObject({ phase: 'timed_out', reason: 'deadline_exceeded', revision: 2 });
  });

  it('an executor that throws fails the job with evaluation_task_failed; a bad outcome with invalid_task_outcome', async () => {
    const outcomes: Array<() => Promise<unknown>> = [() => Promise.reject(new Error('secret-canary')), () => Promise.resolve({ status: 'weird' })];
    const service = await t.service({ worker: { executor: { start: () => (outcomes.shift() as () => Promise<never>)() } } });
    await service.start();
    const failed = await service.submit(APP, evalRequest('good'));
    expect(await settled(service, failed.job_id)).toMatchObject({ phase: 'failed', reason: 'evaluation_task_failed' });
    const invalid = await service.submit(APP, evalRequest('good'));
    expect(await settled(service, invalid.job_id)).toMatchObject({ phase: 'failed', reason: 'invalid_task_outcome' });
    expect(service.capabilities().worker).toBe('custom');
  });

  it('an executor whose start throws: evaluation_job_admission_failed and the row failed with admission_failed', async () => {
    const service = await t.service({ worker: { executor: { start: () => { throw new Error('boom'); } } } });
    await service.start();
    const error = await thrown(service.submit(APP, evalRequest('good')));
    expect(error).toMatchObject({ code: 'evaluation_job_admission_failed' });
    const jobId = (error as EvalServiceError).details?.job_id as string;
    expect(await service.status(APP, jobId)).toMatchObject({ phase: 'failed', reason: 'admission_failed', revision: 2 });
    expect(service.capabilities().active_jobs).toBe(0);
  });

  it('emits content-free telemetry on every transition', async () => {
    const telemetry: Array<{ event: string; payload: Record<string, unknown> }> = [];
    const service = await t.service({}, undefined, { events: { emit: (event: string, payload: object) => telemetry.push({ event, payload: payload as Record<string, unknown> }) } });
    await service.start();
    const { job_id } = await service.submit(APP, evalRequest('good', { metadata: { note: 'canary-meta' } }));
    await settled(service, job_id);
    const moves = telemetry.filter((entry) => entry.event === 'agent_runtime.evaluation.job').map((entry) => entry.payload);
    expect(moves.map((m) => [m.from, m.to, m.revision])).toEqual([['queued', 'running', 1], ['running', 'completed', 2]]);
    expect(Object.keys(moves[0]).sort()).toEqual(['active_jobs', 'duration_ms', 'from', 'queued_jobs', 'reason', 'revision', 'to']);
    const text = JSON.stringify(telemetry);
    for (const secret of [job_id, 'eval-app', 'canary-meta', 'question 0']) expect(text).not.toContain(secret);
  });
});

describe('single owner (spec 05 §2.4, §3)', () => {
  it('a second service on the same store fails with eval_store_already_owned, also with other operational options', async () => {
    await t.started();
    const second = await t.service({ maxConcurrency: 9, callTimeoutMs: 1234 });
    expect(await codeOf(second.start())).toBe('eval_store_already_owned');
    expect(second.state).toBe('stopped');
    const { PostgresEvalStore } = await import('../../src/evaluation/store/postgres-eval-store');
    const { EvalService } = await import('../../src/evaluation/service/eval-service');
    const third = new EvalService({ store: new PostgresEvalStore(await t.dataSource(), { statementTimeoutMs: 5000, connectRetries: 0, maxJobs: 5 }), registry: t.registry.registry });
    t.track(third);
    expect(await codeOf(third.start())).toBe('eval_store_already_owned');
    const wrapped = await t.service({}, (store) => failing(store, () => false));
    expect(await codeOf(wrapped.start())).toBe('eval_store_already_owned');
  });

  it('after the owner\'s connection dies, a new service can start; the old one stops with eval_store_ownership_lost', async () => {
    const first = await t.started();
    const second = await t.service();
    expect(await codeOf(second.start())).toBe('eval_store_already_owned');
    // pg_locks is server-wide: only this database's holders, never another suite's
    await t.sql(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
    await eventually(() => (first.state === 'stopped' ? true : undefined));
    expect(first.stopReason).toBe('eval_store_ownership_lost');
    expect(await thrown(first.status(APP, 'eval-00000000000000000000000000000000'))).toMatchObject({ code: 'eval_service_unavailable', details: { reason: 'eval_store_ownership_lost' } });
    const third = await eventually(async () => {
      const candidate = await t.service();
      return candidate.start().then(() => candidate, () => undefined);
    });
    expect(await codeOf(second.start())).toBe('eval_service_unavailable');
    expect(third.state).toBe('running');
  });

  it('standby: reads nothing, answers eval_service_unavailable {state: standby}, and takes over once the owner stops', async () => {
    const owner = await t.started({ maxConcurrency: 1 });
    const stuck = await owner.submit(APP, evalRequest('slow'));
    const standby = await t.service({ ownership: 'standby' });
    await standby.start();
    expect(standby.state).toBe('standby');
    expect(standby.capabilities().status).toBe('standby');
    expect(await standby.isHealthy(1000)).toBe(false);
    expect(await thrown(standby.status(APP, stuck.job_id))).toMatchObject({ code: 'eval_service_unavailable', details: { state: 'standby' } });
    await owner.stop();
    await eventually(() => (standby.state === 'running' ? true : undefined), 15_000);
    expect(standby.capabilities().recovered_jobs).toBe(1);
    expect(await standby.status(APP, stuck.job_id)).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted' });
  }, 30_000);
});

describe('recovery and stop (spec 05 §3)', () => {
  it('stop leaves queued and running rows; the next start fails them with evaluation_service_restarted and never re-runs them', async () => {
    const first = await t.started({ maxConcurrency: 1 });
    const running = await first.submit(APP, evalRequest('slow'));
    const queued = await first.submit(APP, evalRequest('good'));
    await first.stop();
    const rows = await t.sql('SELECT job_id, phase FROM agent_runtime_eval_jobs ORDER BY created_at_ms, job_id');
    expect(rows.map((r) => r.phase).sort()).toEqual(['queued', 'running']);
    const next = await t.started();
    expect(next.capabilities().recovered_jobs).toBe(2);
    for (const id of [running.job_id, queued.job_id]) {
      expect(await next.status(APP, id)).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted' });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await phaseOf(next, queued.job_id)).toBe<EvalPhase>('failed');
    expect(next.capabilities().active_jobs).toBe(0);
  });
});

describe('fail-stop (spec 05 §5.2, §6.1)', () => {
  it('a terminal write that fails stops the service: health down, submits unavailable, the row stays running until the next start', async () => {
    const lines: string[] = [];
    const service = await t.service({}, (store) => failing(store, (operation, args) => operation === 'transition' && args[3] === 'completed'), { logger: { error: (line: string) => lines.push(line) } });
    await service.start();
    const { job_id } = await service.submit(APP, evalRequest('good'));
    await eventually(() => (service.state === 'stopped' ? true : undefined));
    expect(service.stopReason).toBe('evaluation_result_persistence_failed');
    expect(lines).toEqual([expect.stringContaining('evaluation service stopped: evaluation_result_persistence_failed')]);
    expect(lines.join()).not.toContain(job_id);
    expect(await service.isHealthy(1000)).toBe(false);
    expect(await thrown(service.submit(APP, evalRequest('good')))).toMatchObject({ code: 'eval_service_unavailable', details: { reason: 'evaluation_result_persistence_failed' } });
    expect((await t.sql('SELECT phase FROM agent_runtime_eval_jobs WHERE job_id = $1', [job_id]))[0].phase).toBe('running');
    const next = await t.started();
    expect(await next.status(APP, job_id)).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted' });
  });

  it('a queued cancel whose write fails: evaluation_cancel_persistence_failed, the service stops, the row stays queued', async () => {
    const service = await t.started({ maxConcurrency: 1 }, (store) => failing(store, (operation, args) => operation === 'transition' && args[3] === 'cancelled'));
    await service.submit(APP, evalRequest('slow'));
    const queued = await service.submit(APP, evalRequest('slow'));
    expect(await codeOf(service.cancel(APP, queued.job_id))).toBe('evaluation_cancel_persistence_failed');
    expect(service.state).toBe('stopped');
    expect(service.stopReason).toBe('evaluation_cancel_persistence_failed');
    expect((await t.sql('SELECT phase FROM agent_runtime_eval_jobs WHERE job_id = $1', [queued.job_id]))[0].phase).toBe('queued');
  });

  it('a failed compensation: evaluation_compensation_failed, the service stops, the row stays as it was', async () => {
    const service = await t.started(
      { worker: { executor: { start: () => { throw new Error('start fails'); } } } },
      (store) => failing(store, (operation, args) => operation === 'transition' && args[3] === 'failed'),
    );
    expect(await codeOf(service.submit(APP, evalRequest('good')))).toBe('evaluation_compensation_failed');
    expect(service.state).toBe('stopped');
    expect(service.stopReason).toBe('evaluation_compensation_failed');
    expect((await t.sql('SELECT phase FROM agent_runtime_eval_jobs'))[0].phase).toBe('running');
  });
});

describe('capabilities (spec 05 §9)', () => {
  it('is content-free and is what toJSON and inspect show', async () => {
    const service = await t.started();
    const capabilities = service.capabilities();
    expect(capabilities).toMatchObject({ schema_version: 1, contract_version: 1, status: 'running', max_concurrency: 4, max_queue: 1000, worker: 'local', store: { persistence: 'postgres', tables: 5 } });
    expect(['system_identifier', 'identity_row']).toContain(capabilities.identity_source);
    expect(JSON.parse(JSON.stringify(service))).toEqual(capabilities);
    const { inspect } = await import('node:util');
    expect(inspect(service)).not.toMatch(/Client|password|lock/i);
  });
});

describe('regression gate (compare)', () => {
  it('a candidate that drops the expected tool call regresses on tool_trajectory for every case; the baseline agent does not', async () => {
    const service = await t.started();
    const base = await service.submit(APP, evalRequest('good'));
    await settled(service, base.job_id);
    await service.putBaseline(APP, { evalSetId: 'set-a', name: 'main', jobId: base.job_id });
    const candidate = await service.submit(APP, evalRequest('bad'));
    await settled(service, candidate.job_id);
    const report = await service.compare(APP, candidate.job_id, { evalSetId: 'set-a', baseline: 'main' });
    expect(report.regressed).toBe(true);
    expect(report.metrics.tool_trajectory).toMatchObject({ baseline_score: 1, candidate_score: 0, delta: -1, regressed: true });
    expect(report.cases.map((c) => [c.case_id, c.regressed_metrics.includes('tool_trajectory')])).toEqual([
      ['case-0', true],
      ['case-1', true],
    ]);
    const same = await service.submit(APP, evalRequest('good'));
    await settled(service, same.job_id);
    expect((await service.compare(APP, same.job_id, { evalSetId: 'set-a', baseline: 'main' })).regressed).toBe(false);
    for (const content of ['The answer', 'question', 'lookup']) expect(JSON.stringify(report)).not.toContain(content);
  });

  it('refuses bad options, another set, a job that is not completed, another scope', async () => {
    const service = await t.started();
    const base = await service.submit(APP, evalRequest('good'));
    await settled(service, base.job_id);
    await service.putBaseline(APP, { evalSetId: 'set-a', name: 'main', jobId: base.job_id });
    expect(await thrown(service.compare(APP, base.job_id, { evalSetId: 'set-a', baseline: 'main', tolerance: 2 }))).toMatchObject({ code: 'invalid_eval_compare_options', details: { field: 'tolerance' } });
    expect(await codeOf(service.compare(APP, base.job_id, { evalSetId: 'set-a' } as never))).toBe('invalid_eval_compare_options');
    expect(await codeOf(service.compare(APP, base.job_id, { evalSetId: 'set-b', baseline: 'main' }))).toBe('not_found');
    expect(await codeOf(service.compare(OTHER, base.job_id, { evalSetId: 'set-a', baseline: 'main' }))).toBe('not_found');
    const running = await service.submit(APP, evalRequest('slow'));
    expect(await codeOf(service.compare(APP, running.job_id, { evalSetId: 'set-a', baseline: 'main' }))).toBe('result_not_ready');
  });
});

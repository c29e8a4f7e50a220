import { EvalServiceError } from '../../src/evaluation/eval.errors';
import type { EvalStore } from '../../src/evaluation/eval.types';
import type { PostgresEvalStore } from '../../src/evaluation/store/postgres-eval-store';
import { EvalServiceHarness, evalRequest, eventually, rejection as thrown } from '../support/eval-service-harness';

const APP = { app: 'eval-app' };

let t: EvalServiceHarness;
beforeEach(async () => {
  t = await EvalServiceHarness.create();
});
afterEach(async () => {
  await t.close();
});

/** Ends the session holding this database's ownership locks, as a Postgres restart would. */
const killOwnershipConnection = () =>
  t.sql(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
const phaseRow = async (jobId: string) => (await t.sql('SELECT phase, reason FROM agent_runtime_eval_jobs WHERE job_id = $1', [jobId]))[0];

/** A store wrapper whose `operation` calls go through `decorate`. */
function around(store: PostgresEvalStore, operation: string, decorate: (call: () => Promise<unknown>, args: unknown[]) => Promise<unknown>): EvalStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const call = (...args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      return property === operation ? (...args: unknown[]) => decorate(() => call(...args), args) : call;
    },
  }) as unknown as EvalStore;
}

describe('restart: a new generation after a stop on a fault (spec 05 §6.1)', () => {
  it('after the ownership connection dies, restart() retakes the lock, fails the running job with evaluation_service_restarted, and serves again', async () => {
    const stops: string[] = [];
    const service = await t.service({}, undefined, { onFaultStop: (reason) => stops.push(reason) });
    await service.start();
    const running = await service.submit(APP, evalRequest('slow'));
    await killOwnershipConnection();
    await eventually(() => (stops.length > 0 ? true : undefined));
    expect(stops).toEqual(['eval_store_ownership_lost']);
    expect(service.state).toBe('stopped');
    expect(await thrown(service.status(APP, running.job_id))).toMatchObject({ code: 'eval_service_unavailable', details: { reason: 'eval_store_ownership_lost' } });
    expect(await phaseRow(running.job_id)).toEqual({ phase: 'running', reason: null });

    await eventually(() => service.restart().then(() => true, () => undefined));
    expect(service.state).toBe('running');
    expect(service.stopReason).toBeNull();
    expect(await service.isHealthy(1000)).toBe(true);
    expect(service.capabilities()).toMatchObject({ recovered_jobs: 1, active_jobs: 0, queued_jobs: 0 });
    expect(await service.status(APP, running.job_id)).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted' });
    const next = await service.submit(APP, evalRequest('good'));
    const done = await eventually(async () => {
      const job = await service.status(APP, next.job_id);
      return job.phase === 'running' || job.phase === 'queued' ? undefined : job;
    });
    expect(done.phase).toBe('completed');
    expect(stops).toHaveLength(1);
  });

  it('restart() does nothing while the service runs, and nothing after stop(): that stop is final', async () => {
    const service = await t.started();
    await service.restart();
    expect(service.state).toBe('running');
    expect(service.capabilities().recovered_jobs).toBe(0);
    await service.stop();
    await service.restart();
    expect(service.state).toBe('stopped');
    expect(await thrown(service.start())).toMatchObject({ code: 'eval_service_unavailable' });
  });

  it('stop() during a restart wins: the service ends stopped and holds no lock', async () => {
    const service = await t.service({ ownership: 'standby' });
    await service.start();
    await killOwnershipConnection();
    await eventually(() => (service.state === 'stopped' ? true : undefined));
    const restarting = service.restart().catch(() => undefined);
    await service.stop();
    await restarting;
    expect(service.state).toBe('stopped');
    await eventually(async () => ((await t.sql(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`))[0].n === 0 ? true : undefined));
  });

  it('a restart that finds the store owned elsewhere stands by, and takes over when that owner stops', async () => {
    const service = await t.service({ ownership: 'standby' });
    await service.start();
    await killOwnershipConnection();
    await eventually(() => (service.state === 'stopped' ? true : undefined));
    const other = await eventually(async () => {
      const candidate = await t.service();
      return candidate.start().then(() => candidate, () => undefined);
    });
    await service.restart();
    expect(service.state).toBe('standby');
    await other.stop();
    await eventually(() => (service.state === 'running' ? true : undefined), 15_000);
  }, 30_000);
});

describe('terminal writes (spec 05 §5.2): an outage shorter than the bound loses no outcome', () => {
  it('a completed write that meets two outages is retried, stored as completed, and the service keeps running', async () => {
    let failures = 0;
    const service = await t.started({}, (store) =>
      around(store, 'transition', (call, args) => {
        if (args[3] === 'completed' && failures < 2) {
          failures += 1;
          return Promise.reject(new EvalServiceError('eval_store_unavailable', { sqlstate: '57P01' }));
        }
        return call();
      }),
    );
    const { job_id } = await service.submit(APP, evalRequest('good'));
    await eventually(async () => ((await phaseRow(job_id)).phase === 'completed' ? true : undefined));
    expect(failures).toBe(2);
    expect(service.state).toBe('running');
  });
});

describe('callTimeoutMs (spec 05 §9)', () => {
  it('a call whose store work never settles rejects with timeout after callTimeoutMs; the service stays running', async () => {
    const service = await t.started({ callTimeoutMs: 300 }, (store) => around(store, 'getJob', () => new Promise(() => undefined)));
    const startedAt = Date.now();
    expect(await thrown(service.status(APP, `eval-${'0'.repeat(32)}`))).toMatchObject({ code: 'timeout' });
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(5000);
    expect(service.state).toBe('running');
    expect((await service.listJobs(APP)).items).toEqual([]);
  });

  it('a store answer that comes inside the bound is awaited, not cut off', async () => {
    const service = await t.started({ callTimeoutMs: 3000 }, (store) => around(store, 'listJobs', (call) => new Promise((resolve) => setTimeout(resolve, 600)).then(call)));
    expect((await service.listJobs(APP)).items).toEqual([]);
  });

  it('an out-of-range callTimeoutMs is refused with invalid_eval_service_options', async () => {
    for (const callTimeoutMs of [0, 300_001, 1.5]) {
      expect(await thrown(t.service({ callTimeoutMs }))).toMatchObject({ code: 'invalid_eval_service_options', details: { field: 'callTimeoutMs' } });
    }
  });
});

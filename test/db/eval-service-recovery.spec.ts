import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { EvalServiceHarness, eventually } from '../support/eval-service-harness';

const CHILD = resolve(__dirname, '..', 'fixtures', 'eval-service-child.js');
const APP = { app: 'killed' };

let t: EvalServiceHarness;
beforeAll(async () => {
  t = await EvalServiceHarness.create();
});
afterAll(async () => {
  await t.close();
});

/** Starts the child on the harness database and waits for its line of job ids. */
async function childWithJobs(): Promise<{ pid: number; kill: () => Promise<void>; jobs: { running: string; queued: string; phases: string[] } }> {
  const child = spawn(process.execPath, [CHILD], { env: { ...process.env, DATABASE_URL: t.database.url }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
  return {
    pid: child.pid as number,
    jobs: JSON.parse(line),
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('recovery after kill -9 (spec 05 §3)', () => {
  it('rows left queued and running by a killed service become failed with evaluation_service_restarted, are counted, and never run', async () => {
    const child = await childWithJobs();
    expect(child.jobs.phases).toEqual(['running', 'queued']);
    await child.kill();
    const rowsAfterKill = await t.sql('SELECT phase FROM agent_runtime_eval_jobs ORDER BY phase');
    expect(rowsAfterKill.map((row) => row.phase)).toEqual(['queued', 'running']);

    // the killed session's locks go once the server has seen its socket close
    const service = await eventually(async () => {
      const candidate = await t.service();
      return candidate.start().then(() => candidate, () => undefined);
    });
    expect(service.capabilities().recovered_jobs).toBe(2);
    const running = await service.status(APP, child.jobs.running);
    const queued = await service.status(APP, child.jobs.queued);
    expect(running).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted', revision: 2 });
    expect(queued).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted', revision: 1, started_at_ms: null });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(service.capabilities()).toMatchObject({ active_jobs: 0, queued_jobs: 0 });
    expect((await service.status(APP, child.jobs.queued)).started_at_ms).toBeNull();
  }, 60_000);
});

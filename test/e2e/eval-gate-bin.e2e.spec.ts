import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { EvaluationClient, REFERENCE_CASE_IDS, referenceEvalRequest } from './support/evaluation-client';
import { RecordingLogger } from './support/harness';
import { startReferenceService, type ReferenceService } from './support/reference-service';

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'dist', 'src', 'cli', 'bin.js');
/** What `npm run eval:gate` passes before the caller's words: the reference app's scope and agents. */
const REFERENCE = ['eval-gate', '--app', 'reference', '--agents', 'dist/src/reference-app/eval-gate-agents.js'];

interface GateRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the compiled bin's `eval-gate` on the reference agents with plain `node` on `databaseUrl`; kills it after 30 s. */
function runGate(args: readonly string[], databaseUrl: string): Promise<GateRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...REFERENCE, ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const gateArgs = (agent: string, baseline = 'main') => ['--set', 'reference-helper', '--baseline', baseline, '--agent', agent];

/** No stack frame (`    at fn (file:line)`) in what the CLI printed. */
const STACK_FRAME = /^\s+at\s/m;

/** `npm run eval:gate` (the bin's `eval-gate` on the reference agents) against a baseline the reference service stored. */
describe('eval gate of the bin on the reference service', () => {
  let database: FreshDatabase;
  let baselineJobId: string;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    database = await createFreshDatabase();
    const service = await startReferenceService({ databaseUrl: database.url, logDecisions: false }, logger);
    try {
      const client = new EvaluationClient(service.http);
      baselineJobId = await client.submitted(referenceEvalRequest());
      expect(await client.waitForPhase(baselineJobId)).toMatchObject({ phase: 'completed' });
      expect((await client.putBaseline('reference-helper', 'main', { job_id: baselineJobId })).status).toBe(200);
    } finally {
      service.http.destroyAll();
      await service.app.close();
    }
  }, 60_000);

  afterAll(async () => {
    await database?.drop();
  });

  test('helper-draft against the stored baseline: exit 1, a JSON report naming tool_trajectory and the three cases', async () => {
    const run = await runGate(gateArgs('helper-draft'), database.url);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: 'nest-agent-runtime: eval_regressed: the candidate regressed against the baseline: tool_trajectory, tool_trajectory_in_order regressed\n' });
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ schema_version: 1, regressed: true, tolerance: 0, baseline_job_id: baselineJobId, candidate_job_id: expect.stringMatching(/^eval-[0-9a-f]{32}$/) });
    expect(report.candidate_job_id).not.toBe(baselineJobId);
    expect(report.metrics.tool_trajectory).toMatchObject({ baseline_score: 1, candidate_score: 0, regressed: true });
    expect(report.metrics.tool_trajectory_in_order).toMatchObject({ regressed: true });
    expect(report.metrics.response_match).toMatchObject({ regressed: false });
    expect(report.cases.map((item: { case_id: string }) => item.case_id)).toEqual([...REFERENCE_CASE_IDS]);
    for (const item of report.cases) expect(item.regressed_metrics).toContain('tool_trajectory');
    expect(run.stdout).not.toContain('runbook, section 2');
  }, 40_000);

  test('helper against its own baseline: exit 0 and regressed false', async () => {
    const run = await runGate(gateArgs('helper'), database.url);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({ regressed: false, baseline_job_id: baselineJobId, cases: [] });
  }, 40_000);

  test('a baseline that does not exist: exit 2 not_found, one line and no stack trace', async () => {
    const run = await runGate(gateArgs('helper', 'no-such-baseline'), database.url);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('nest-agent-runtime: not_found: the eval set or the baseline does not exist in the --app scope\n');
    expect(run.stderr).not.toMatch(STACK_FRAME);
  }, 40_000);

  test('an agent the reference service does not have: exit 2 unknown_eval_agent, no stack trace', async () => {
    const run = await runGate(gateArgs('nobody'), database.url);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('nest-agent-runtime: unknown_eval_agent: the --agents registry has no agent named by --agent\n');
    expect(run.stderr).not.toMatch(STACK_FRAME);
  }, 40_000);

  test('a database that does not answer: exit 3 database_unreachable with the socket code only', async () => {
    const run = await runGate(gateArgs('helper'), 'postgres://postgres:secret-password@127.0.0.1:1/nowhere');
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('nest-agent-runtime: database_unreachable: could not connect to the database (ECONNREFUSED)\n');
    expect(run.stderr).not.toContain('secret-password');
    expect(run.stderr).not.toMatch(STACK_FRAME);
  }, 40_000);

  test('missing or bad arguments: exit 2 with one line naming what is wrong, nothing evaluated', async () => {
    const cases: Array<[string[], string]> = [
      [[], 'missing_argument'],
      [['--set', 'reference-helper', '--baseline', 'main'], 'missing_argument'],
      [['--set', 'reference-helper', '--agent', 'helper'], 'missing_argument'],
      [[...gateArgs('helper'), '--tolerance', '2'], 'invalid_arguments'],
      [[...gateArgs('helper'), '--tolerance', 'x'], 'invalid_arguments'],
      [[...gateArgs('helper'), '--tolerance', '0x1'], 'invalid_arguments'],
      [[...gateArgs('helper'), '--tolerance', ''], 'invalid_arguments'],
      [[...gateArgs('helper'), '--bogus'], 'invalid_arguments'],
    ];
    for (const [args, code] of cases) {
      const run = await runGate(args, database.url);
      expect({ args, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ args, code: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^nest-agent-runtime: ${code}: [^\\n]+\\n$`)) });
      expect(run.stderr).not.toMatch(STACK_FRAME);
    }
  }, 60_000);

  describe('beside a running reference service on the same database', () => {
    let service: ReferenceService;
    beforeAll(async () => {
      service = await startReferenceService({ databaseUrl: database.url, logDecisions: false }, logger);
    }, 60_000);
    afterAll(async () => {
      service?.http.destroyAll();
      await service?.app.close();
    });

    test('the gate reads the owner’s baseline and reports; the owner keeps its ownership, stores no candidate job and keeps serving', async () => {
      const client = new EvaluationClient(service.http);
      const ready = await service.http.send('/health/ready').result;
      expect(ready.body.details.evaluation).toMatchObject({ status: 'up', state: 'running' });
      const before = (await client.list('?limit=1000')).body.jobs.map((job: { job_id: string }) => job.job_id);
      expect(before).toEqual([baselineJobId]);

      const regressed = await runGate(gateArgs('helper-draft'), database.url);
      expect(regressed.code).toBe(1);
      expect(JSON.parse(regressed.stdout)).toMatchObject({ regressed: true, baseline_job_id: baselineJobId });
      const clean = await runGate(gateArgs('helper'), database.url);
      expect(clean.code).toBe(0);

      const after = await service.http.send('/health/ready').result;
      expect(after.status).toBe(200);
      expect(after.body.details.evaluation).toMatchObject({ status: 'up', state: 'running' });
      expect((await client.list('?limit=1000')).body.jobs.map((job: { job_id: string }) => job.job_id)).toEqual(before);
      const jobId = await client.submitted({ ...referenceEvalRequest(), agent: 'helper-draft' });
      expect(await client.waitForPhase(jobId)).toMatchObject({ phase: 'completed' });
      const compared = await client.compare(jobId, 'baseline=main');
      expect(compared.body.report).toMatchObject({ regressed: true, baseline_job_id: baselineJobId });
    }, 60_000);
  });
});

/**
 * The bin's two checks, in process through `runCli` on real Postgres: `verify-audit` (the policy audit
 * log's hash chain) and `eval-gate` (a stored baseline against a candidate agent).
 */
import { Client } from 'pg';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { PostgresAuditLog } from '../../src/policy/audit-log/postgres-audit-log';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { evalGateAgentsCalls } from '../fixtures/eval-gate-agents';
import { cli, expectFailure, UNREACHABLE_URL } from '../support/cli-run';
import { EvalServiceHarness, evalRequest, eventually } from '../support/eval-service-harness';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

async function sql(url: string, text: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe('verify-audit', () => {
  let database: FreshDatabase;
  beforeEach(async () => {
    database = await createFreshDatabase({ migrate: false });
  });
  afterEach(async () => {
    await database.drop();
  });

  /** The audit-log group migrated through the bin, then `n` decisions recorded. */
  async function auditLogWith(n: number): Promise<void> {
    expect((await cli(['migrate', '--url', database.url, '--modules', 'audit-log'])).code).toBe(0);
    const dataSource = await createAgentRuntimeDataSource(database.url, { modules: ['audit-log'] }).initialize();
    try {
      const log = new PostgresAuditLog(dataSource);
      await log.init();
      const policy = RuntimePolicy.compile({ id: 'cli-test', tools: { allow: ['search'], deny: ['shell'] } });
      for (let i = 0; i < n; i += 1) await log.record(policy.checkTool('shell', { i }));
    } finally {
      await dataSource.destroy();
    }
  }

  it('an intact chain of a database with only the audit-log tables: exit 0 and the JSON report', async () => {
    await auditLogWith(3);
    const run = await cli(['verify-audit'], { DATABASE_URL: database.url });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: [] });
    expect(JSON.parse(run.stdout)).toMatchObject({ schema_version: 1, ok: true, rows_checked: 3, head_seq: 3, first_broken: null });
  });

  it('an empty log verifies too', async () => {
    await auditLogWith(0);
    const run = await cli(['verify-audit', '--url', database.url]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, rows_checked: 0, head_seq: 0 });
  });

  it('a row changed behind the triggers: exit 1 audit_chain_broken at its seq, the report on stdout', async () => {
    await auditLogWith(3);
    await sql(
      database.url,
      `ALTER TABLE agent_runtime_policy_audit_log DISABLE TRIGGER USER;
       UPDATE agent_runtime_policy_audit_log SET subject = 'tampered' WHERE seq = 2;
       ALTER TABLE agent_runtime_policy_audit_log ENABLE TRIGGER USER;`,
    );
    const run = await cli(['verify-audit', '--url', database.url]);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, rows_checked: 1, first_broken: { seq: 2, reason: 'column_mismatch' } });
    expect(expectFailure(run, 1, 'audit_chain_broken')).toBe('nest-agent-runtime: audit_chain_broken: the audit chain is broken at seq 2 (column_mismatch)');
  });

  it('a database without the audit-log migrations: exit 3 schema_mismatch listing what is missing, nothing printed on stdout', async () => {
    await cli(['migrate', '--url', database.url, '--modules', 'ledger']);
    const run = await cli(['verify-audit', '--url', database.url]);
    expect(run.stdout).toBe('');
    const line = expectFailure(run, 3, 'schema_mismatch');
    expect(line).toContain('migration:PolicyAuditLog1764400000000: expected applied, actual pending');
    expect(line).toContain('agent_runtime_policy_audit_log');
  });

  it('an unreachable database: exit 3', async () => {
    expectFailure(await cli(['verify-audit', '--url', UNREACHABLE_URL]), 3, 'database_unreachable');
  });
});

describe('eval-gate', () => {
  const AGENTS = 'test/fixtures/eval-gate-agents.ts';
  let t: EvalServiceHarness;
  let baselineJobId: string;

  /** The baseline `main` of `set-a` in scope `gate-app`: a completed job of the agent `good`. */
  beforeAll(async () => {
    t = await EvalServiceHarness.create();
    const service = await t.started();
    const scope = { app: 'gate-app' };
    baselineJobId = (await service.submit(scope, evalRequest('good', { cases: 2 }))).job_id;
    await eventually(async () => ((await service.status(scope, baselineJobId)).phase === 'completed' ? true : undefined));
    await service.putBaseline(scope, { evalSetId: 'set-a', name: 'main', jobId: baselineJobId });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const gate = (agent: string, extra: string[] = [], url = t.database.url) =>
    cli(['eval-gate', '--url', url, '--app', 'gate-app', '--set', 'set-a', '--baseline', 'main', '--agent', agent, '--agents', AGENTS, ...extra]);

  it('the baseline agent against its own baseline: exit 0, regressed false; the agents are opened on the gate URL and closed', async () => {
    const before = { ...evalGateAgentsCalls };
    const run = await gate('good');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: [] });
    expect(JSON.parse(run.stdout)).toMatchObject({ schema_version: 1, regressed: false, baseline_job_id: baselineJobId, cases: [] });
    expect(evalGateAgentsCalls.opened - before.opened).toBe(1);
    expect(evalGateAgentsCalls.closed - before.closed).toBe(1);
    expect(evalGateAgentsCalls.databaseUrls.at(-1)).toBe(t.database.url);
  });

  it('a worse candidate: exit 1 eval_regressed naming the metrics, the report on stdout; nothing is stored', async () => {
    const jobs = await t.sql('SELECT job_id FROM agent_runtime_eval_jobs');
    const run = await gate('bad');
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ regressed: true, tolerance: 0, baseline_job_id: baselineJobId, metrics: { response_match: { regressed: true }, tool_trajectory: { regressed: true } } });
    expect(expectFailure(run, 1, 'eval_regressed')).toBe('nest-agent-runtime: eval_regressed: the candidate regressed against the baseline: response_match, tool_trajectory regressed');
    expect(await t.sql('SELECT job_id FROM agent_runtime_eval_jobs')).toEqual(jobs);
  });

  it('--tolerance reaches the comparison: the report carries it', async () => {
    const run = await gate('good', ['--tolerance', '0.25']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ regressed: false, tolerance: 0.25 });
  });

  it.each([
    ['a baseline that does not exist', ['eval-gate', '--app', 'gate-app', '--set', 'set-a', '--baseline', 'nope', '--agent', 'good', '--agents', AGENTS], 'not_found'],
    ['another app scope', ['eval-gate', '--app', 'other-app', '--set', 'set-a', '--baseline', 'main', '--agent', 'good', '--agents', AGENTS], 'not_found'],
    ['an agent the registry does not have', ['eval-gate', '--app', 'gate-app', '--set', 'set-a', '--baseline', 'main', '--agent', 'nobody', '--agents', AGENTS], 'unknown_eval_agent'],
    ['a missing argument', ['eval-gate', '--app', 'gate-app', '--set', 'set-a', '--agent', 'good'], 'missing_argument'],
    ['a bad tolerance', ['eval-gate', '--app', 'gate-app', '--set', 'set-a', '--baseline', 'main', '--agent', 'good', '--agents', AGENTS, '--tolerance', '2'], 'invalid_arguments'],
    ['an --agents module that does not exist', ['eval-gate', '--app', 'gate-app', '--set', 'set-a', '--baseline', 'main', '--agent', 'good', '--agents', 'test/fixtures/none.js'], 'agents_module_failed'],
    ['an --agents function that throws', ['eval-gate', '--app', 'gate-app', '--set', 'set-a', '--baseline', 'main', '--agent', 'good', '--agents', 'test/fixtures/eval-gate-agents-failing.ts'], 'agents_module_failed'],
  ])('%s: exit 2 %s, nothing on stdout', async (_name, argv, code) => {
    const run = await cli(argv, { DATABASE_URL: t.database.url });
    expect(run.stdout).toBe('');
    expect(expectFailure(run, 2, code)).not.toContain('CANARY');
  });

  it('a database without the evaluation tables: exit 3 schema_mismatch telling which module to migrate', async () => {
    const bare = await createFreshDatabase({ migrate: false });
    try {
      const line = expectFailure(await gate('good', [], bare.url), 3, 'schema_mismatch');
      expect(line).toBe('nest-agent-runtime: schema_mismatch: the evaluation tables are not migrated: run nest-agent-runtime migrate --modules evaluation');
    } finally {
      await bare.drop();
    }
  });

  it('an unreachable database: exit 3, the password never printed', async () => {
    expectFailure(await gate('good', [], UNREACHABLE_URL), 3, 'database_unreachable');
  });
});

/**
 * One report at start (issue 23 item 5): a Nest app whose modules find tampered tables fails
 * start-up once, with one `schema_mismatch` listing every mismatch as `{module, table, property,
 * expected, actual}`, and prints no stack frame — in-process, and from the reference service.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { ConsoleLogger, type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { failureReportLines } from '../../src/database/failure-report';
import { SchemaValidatorError } from '../../src/database/schema-validator.errors';
import { LedgerModule } from '../../src/ledger/ledger.module';
import { RuntimePolicyModule } from '../../src/policy/runtime-policy.module';
import { RuntimeServicesModule } from '../../src/services/runtime-services.module';
import { EvaluationModule } from '../../src/evaluation/evaluation.module';
import { ClusterModule } from '../../src/cluster/cluster.module';
import { AdmissionModule } from '../../src/admission/admission.module';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { PostgresRunStoreProvider } from '../../src/runner/runs/stores/postgres/postgres-run-store.provider';
import { RegistryRunnerDouble } from '../../src/runner/runs/testing/registry-runner-double';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const ROOT = path.resolve(__dirname, '../..');
const FRAME = /^\s+at /m;

/** One tampering per module: the module, the table, the mismatch property, and the SQL. */
const TAMPERINGS = {
  ledger: { table: 'agent_runtime_invocations', property: 'column:outcome', sql: 'ALTER TABLE agent_runtime_invocations DROP COLUMN outcome' },
  policy_audit_log: { table: 'agent_runtime_policy_audit_log', property: 'column:reason', sql: 'ALTER TABLE agent_runtime_policy_audit_log ALTER COLUMN reason TYPE varchar(200)' },
  runtime_services: { table: 'agent_runtime_memory_entries', property: 'column:author', sql: 'ALTER TABLE agent_runtime_memory_entries DROP COLUMN author' },
  evaluation: { table: 'agent_runtime_eval_jobs', property: 'column:agent', sql: 'ALTER TABLE agent_runtime_eval_jobs DROP COLUMN agent' },
  cluster_admission: { table: 'agent_runtime_admission_queue', property: 'column:enqueued_at', sql: 'ALTER TABLE agent_runtime_admission_queue DROP COLUMN enqueued_at' },
  runs: { table: 'agent_runtime_runs', property: 'column:user_id', sql: 'ALTER TABLE agent_runtime_runs DROP COLUMN user_id' },
} as const;
type Tampered = keyof typeof TAMPERINGS;

async function tamper(database: FreshDatabase, modules: readonly Tampered[]): Promise<void> {
  const admin = new Client({ connectionString: database.url });
  await admin.connect();
  try {
    for (const module of modules) await admin.query(TAMPERINGS[module].sql);
  } finally {
    await admin.end();
  }
}

/** A logger that keeps every line Nest prints. */
class CapturingLogger extends ConsoleLogger {
  readonly lines: string[] = [];
  protected override printMessages(messages: unknown[], context = '', logLevel: string = 'log'): void {
    for (const message of messages) this.lines.push(`${logLevel} [${context}] ${message instanceof Error ? (message.stack ?? message.message) : inspect(message)}`);
  }
}

/** Creates and initialises the app; the error it failed with (or throws when it started). */
async function startupFailure(imports: NonNullable<ModuleMetadata['imports']>, logger: CapturingLogger): Promise<unknown> {
  class AppModule {}
  const app = await NestFactory.create({ module: AppModule, imports }, { logger, abortOnError: false });
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    return error;
  }
  await app.close();
  throw new Error('expected start-up to fail, but the app started');
}

const typeOrm = (url: string) => TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(url), retryAttempts: 0 });
/** Evaluation without a RunsModule: a worker of its own (never called here) and one preparation thread. */
const evaluation = () =>
  EvaluationModule.forRoot({ service: { preparation: { threads: 1 }, worker: { executor: { start: () => Promise.resolve({ status: 'error' as const, reason: 'unused' }) } } } });
const policy = () => RuntimePolicyModule.forRoot({ policy: { agents: { allow: ['a'] }, tools: { allow: ['search'] } }, auditLog: 'postgres' });

function expectReport(error: unknown, modules: readonly Tampered[]): void {
  expect(SchemaValidatorError.isAgentRuntimeError(error, SchemaValidatorError)).toBe(true);
  const report = error as SchemaValidatorError;
  expect(report.code).toBe('schema_mismatch');
  const mismatches = report.details?.mismatches as Array<Record<string, string | null>>;
  for (const mismatch of mismatches) expect(Object.keys(mismatch).sort()).toEqual(['actual', 'expected', 'module', 'property', 'table']);
  expect(new Set(mismatches.map((m) => m.module))).toEqual(new Set(modules));
  for (const module of modules) {
    expect(mismatches).toContainEqual(expect.objectContaining({ module, table: TAMPERINGS[module].table, property: TAMPERINGS[module].property }));
  }
  // printed by the reference service's report, by Node for an uncaught rejection, or by a logger: no frame
  const lines = failureReportLines('failed to start:', error);
  expect(lines).toHaveLength(1 + mismatches.length);
  expect(lines.join('\n')).not.toMatch(FRAME);
  expect(inspect(error)).not.toMatch(FRAME);
  expect(String(report.stack)).toBe(failureReportLines('SchemaValidatorError:', error).join('\n'));
}

describe('one start-up report of every schema mismatch', () => {
  let database: FreshDatabase;
  beforeEach(async () => {
    database = await createFreshDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it('four modules with a tampered table each (ledger, policy audit log, durable bundle, evaluation): start-up fails once naming all four', async () => {
    const modules: Tampered[] = ['ledger', 'policy_audit_log', 'runtime_services', 'evaluation'];
    await tamper(database, modules);
    const logger = new CapturingLogger();
    const error = await startupFailure(
      [typeOrm(database.url), LedgerModule.forRoot(), policy(), RuntimeServicesModule.forRoot({ profile: 'durable_local', config: {} }), evaluation()],
      logger,
    );
    expectReport(error, modules);
    // nothing failed before the report: no other error was logged, and no frame anywhere
    expect(logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
    expect(logger.lines.join('\n')).not.toMatch(FRAME);
  });

  it('cluster admission and the run store join the report beside the ledger, without going through a provider factory', async () => {
    const modules: Tampered[] = ['ledger', 'cluster_admission', 'runs'];
    await tamper(database, modules);
    const logger = new CapturingLogger();
    const error = await startupFailure(
      [
        typeOrm(database.url),
        ClusterModule.forRoot(),
        AdmissionModule.forRoot({ globalLimit: 2, cluster: {} }),
        LedgerModule.forRoot(),
        RunsModule.forRoot({ runners: [new RegistryRunnerDouble()], store: PostgresRunStoreProvider }),
      ],
      logger,
    );
    expectReport(error, modules);
    expect(logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
  });

  it('the same app on untouched tables starts', async () => {
    class AppModule {}
    const app = await NestFactory.create(
      { module: AppModule, imports: [typeOrm(database.url), LedgerModule.forRoot(), policy(), RuntimeServicesModule.forRoot({ profile: 'durable_local', config: {} }), evaluation()] },
      { logger: false, abortOnError: false },
    );
    await app.init();
    await app.close();
  });

  it('the reference service prints one report naming the four modules, with no frame, and exits 1', async () => {
    const modules: Tampered[] = ['ledger', 'policy_audit_log', 'runtime_services', 'evaluation'];
    await tamper(database, modules);
    const { code, stdout, stderr } = await runReferenceService(database.url);
    expect(code).toBe(1);
    const output = `${stdout}\n${stderr}`;
    expect(output).not.toMatch(FRAME);
    expect(output.match(/schema_mismatch \{"mismatches":\d+\}/g)).toHaveLength(1);
    for (const module of modules) {
      expect(output).toContain(JSON.stringify({ module, table: TAMPERINGS[module].table, property: TAMPERINGS[module].property }).slice(0, -1));
    }
  }, 60_000);
});

/** Runs `node dist/src/main.js` (built by the global setup) on `url` until it exits. */
function runReferenceService(url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/main.js')], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, PORT: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

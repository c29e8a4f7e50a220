/**
 * The bin (`nest-agent-runtime`), in process through `runCli` on real Postgres: `--help`, usage
 * failures, `migrate` and `status` per module group, and the compiled bin run once with plain `node`.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { Client } from 'pg';
import { cli, expectFailure, REPO_ROOT, UNREACHABLE_URL } from '../support/cli-run';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const AUDIT_LOG = ['PolicyAuditLog1764400000000', 'PolicyAuditHeadGuard1764600000000'];
const ALL_GROUPS = ['audit-log', 'ledger', 'sessions', 'evaluation', 'artifacts', 'memory', 'cluster'];

async function sql<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

const tablesOf = async (url: string): Promise<string[]> =>
  (await sql<{ name: string }>(url, `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`)).map((row) => row.name);

let database: FreshDatabase;
beforeEach(async () => {
  database = await createFreshDatabase({ migrate: false });
});
afterEach(async () => {
  await database.drop();
});

describe('--help', () => {
  it('prints the commands and the exit codes on stdout, exit 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const run = await cli(argv);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: [] });
      expect(run.stdout).toMatch(/^usage: nest-agent-runtime <command>/);
      for (const command of ['migrate', 'status', 'verify-audit', 'eval-gate']) expect(run.stdout).toContain(`  ${command} `);
      expect(run.stdout).toContain('exit: 0 ok, 1 the check failed, 2 usage, 3 database unreachable or schema problem');
    }
  });

  it.each(['migrate', 'status', 'verify-audit', 'eval-gate'])('%s --help prints its usage and options without touching a database', async (command) => {
    const run = await cli([command, '--help'], { DATABASE_URL: UNREACHABLE_URL });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: [] });
    expect(run.stdout).toMatch(new RegExp(`^usage: nest-agent-runtime ${command}`));
    expect(run.stdout).toContain('--url <url>');
    expect(run.stdout).toMatch(/\nexit: 0 /);
  });
});

describe('usage failures: exit 2, one line, nothing done', () => {
  it.each([
    [[], 'missing_command'],
    [['frobnicate'], 'unknown_command'],
    [['migrate', '--bogus'], 'invalid_arguments'],
    [['migrate', '--ulr=postgres://u:secret-password-7f3a@h/db'], 'invalid_arguments'],
    [['migrate', 'postgres://u:secret-password-7f3a@h/db'], 'invalid_arguments'],
    [['status', '--url'], 'invalid_arguments'],
    [['status'], 'missing_url'],
    [['status', '--url', 'mysql://u:secret-password-7f3a@h/db'], 'invalid_url'],
    [['migrate', '--url', 'postgres://h/db', '--modules', 'audit-log,bogus'], 'unknown_module'],
  ])('%j: %s', async (argv, code) => {
    const run = await cli(argv);
    expect(run.stdout).toBe('');
    expectFailure(run, 2, code);
  });

  it('an unknown module is named beside the list of modules', async () => {
    const line = expectFailure(await cli(['status', '--modules', 'ledger,audit_log'], { DATABASE_URL: database.url }), 2, 'unknown_module');
    expect(line).toContain('"audit_log" is not a module; the modules are audit-log, ledger, sessions, evaluation, artifacts, memory, cluster');
  });
});

describe('migrate', () => {
  it('--modules audit-log applies only its two migrations and creates only its tables; a second run applies nothing', async () => {
    const first = await cli(['migrate', '--url', database.url, '--modules', 'audit-log']);
    expect(first).toEqual({ code: 0, stderr: [], stdout: [...AUDIT_LOG.map((name) => `applied audit-log ${name}`), 'up to date: audit-log'].join('\n') });
    expect(await tablesOf(database.url)).toEqual(['agent_runtime_migrations', 'agent_runtime_policy_audit_head', 'agent_runtime_policy_audit_log']);
    expect(await cli(['migrate', '--url', database.url, '--modules', 'audit-log'])).toEqual({ code: 0, stderr: [], stdout: 'up to date: audit-log' });
  });

  it('without --modules applies every group (from DATABASE_URL), in timestamp order', async () => {
    await cli(['migrate', '--modules', 'audit-log'], { DATABASE_URL: database.url });
    const run = await cli(['migrate'], { DATABASE_URL: database.url });
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.at(-1)).toBe(`up to date: ${ALL_GROUPS.join(', ')}`);
    expect(lines.slice(0, -1)).toEqual([
      'applied ledger InvocationLedger1764500000000',
      'applied sessions RunnerSessions1764700000000',
      'applied evaluation EvaluationStore1764800000000',
      'applied artifacts RuntimeArtifacts1764900000000',
      'applied memory RuntimeMemory1764900000001',
      'applied memory MemoryOutbox1764900000002',
      'applied cluster ClusterInstances1765000000000',
      'applied cluster ClusterAdmission1765000000001',
      'applied cluster ClusterRuns1765000000002',
      'applied cluster RunOwnerPrincipal1765100000000',
      'applied cluster ClusterInstanceGrace1765200000000',
      'applied cluster ClusterAdmissionFlow1765300000000',
    ]);
    expect(await tablesOf(database.url)).toHaveLength(26); // 25 tables of the groups and the migrations table
  });

  it('--url wins over DATABASE_URL', async () => {
    const run = await cli(['migrate', '--url', database.url, '--modules', 'ledger'], { DATABASE_URL: UNREACHABLE_URL });
    expect(run.code).toBe(0);
  });

  it('an unreachable database: exit 3 database_unreachable with the socket code only', async () => {
    const line = expectFailure(await cli(['migrate', '--url', UNREACHABLE_URL]), 3, 'database_unreachable');
    expect(line).toBe('nest-agent-runtime: database_unreachable: could not connect to the database (ECONNREFUSED)');
  });

  it('a database that does not exist is unreachable too, and its name is not printed', async () => {
    const url = new URL(database.url);
    url.pathname = '/agent_runtime_no_such_database';
    const line = expectFailure(await cli(['migrate', '--url', url.toString()]), 3, 'database_unreachable');
    expect(line).toContain('sqlstate 3D000');
    expect(line).not.toContain('agent_runtime_no_such_database');
  });

  it('a deleted row of the migrations table is a schema problem: exit 3, nothing applied', async () => {
    await cli(['migrate', '--url', database.url, '--modules', 'audit-log']);
    await sql(database.url, `DELETE FROM agent_runtime_migrations WHERE name = 'PolicyAuditLog1764400000000'`);
    const line = expectFailure(await cli(['migrate', '--url', database.url, '--modules', 'audit-log']), 3, 'schema_mismatch');
    expect(line).toContain('agent_runtime_migrations migration:PolicyAuditLog1764400000000: expected applied, actual missing row, tables present');
  });
});

describe('status', () => {
  it('lists applied and pending migrations per group; exit 1 while any is pending, 0 once none is', async () => {
    await cli(['migrate', '--url', database.url, '--modules', 'audit-log,ledger']);
    const partial = await cli(['status', '--url', database.url, '--modules', 'audit-log,memory,ledger']);
    expect(partial.stdout.split('\n')).toEqual([
      'audit-log  applied  PolicyAuditLog1764400000000',
      'audit-log  applied  PolicyAuditHeadGuard1764600000000',
      'ledger     applied  InvocationLedger1764500000000',
      'memory     pending  RuntimeMemory1764900000001',
      'memory     pending  MemoryOutbox1764900000002',
    ]);
    expect(expectFailure(partial, 1, 'pending_migrations')).toBe('nest-agent-runtime: pending_migrations: 2 migrations pending (memory): run nest-agent-runtime migrate --modules memory');

    expect(await cli(['status', '--url', database.url, '--modules', 'ledger,audit-log'])).toMatchObject({ code: 0, stderr: [] });
    const all = await cli(['status'], { DATABASE_URL: database.url });
    expect(all.stdout.split('\n').filter((line) => line.includes(' pending '))).toHaveLength(11);
    expectFailure(all, 1, 'pending_migrations');
    await cli(['migrate', '--url', database.url]);
    expect(await cli(['status', '--url', database.url])).toMatchObject({ code: 0, stderr: [] });
  });

  it('reads only: a database without the migrations table stays without it', async () => {
    expectFailure(await cli(['status', '--url', database.url, '--modules', 'cluster']), 1, 'pending_migrations');
    expect(await tablesOf(database.url)).toEqual([]);
  });

  it('a pending migration whose tables exist: exit 3 schema_mismatch naming it', async () => {
    await cli(['migrate', '--url', database.url, '--modules', 'sessions']);
    await sql(database.url, `DELETE FROM agent_runtime_migrations`);
    const line = expectFailure(await cli(['status', '--url', database.url, '--modules', 'sessions']), 3, 'schema_mismatch');
    expect(line).toContain('RunnerSessions1764700000000');
  });

  it('an unreachable database: exit 3', async () => {
    expectFailure(await cli(['status', '--url', UNREACHABLE_URL]), 3, 'database_unreachable');
  });
});

describe('the compiled bin (dist/src/cli/bin.js) with plain node', () => {
  const BIN = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'bin.js');
  const node = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 });

  it('starts with a shebang and sets the exit code; a failure is one stderr line without a stack trace or the password', async () => {
    expect((await import('node:fs')).readFileSync(BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const migrated = node(['migrate', '--modules', 'audit-log'], { DATABASE_URL: database.url });
    expect({ status: migrated.status, stderr: migrated.stderr }).toEqual({ status: 0, stderr: '' });
    const pending = node(['status', '--modules', 'audit-log,ledger'], { DATABASE_URL: database.url });
    expect({ status: pending.status, stderr: pending.stderr }).toEqual({ status: 1, stderr: 'nest-agent-runtime: pending_migrations: 1 migration pending (ledger): run nest-agent-runtime migrate --modules ledger\n' });
    const unreachable = node(['status', '--url', UNREACHABLE_URL]);
    expect({ status: unreachable.status, stdout: unreachable.stdout, stderr: unreachable.stderr }).toEqual({
      status: 3,
      stdout: '',
      stderr: 'nest-agent-runtime: database_unreachable: could not connect to the database (ECONNREFUSED)\n',
    });
  }, 60_000);
});

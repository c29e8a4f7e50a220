/**
 * Migrations grouped per module: an app that installs only the audit-log group's migrations starts
 * with `RuntimePolicyModule` and `auditLog: 'postgres'`, records a denial, and its database holds only
 * the audit-log tables and the migrations table. Both ways a user applies them: the package's
 * `runAgentRuntimeMigrations` (what the bin runs) and TypeORM's own `migrations` option.
 */
import 'reflect-metadata';
import { Body, Controller, Module, Post, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  AGENT_RUNTIME_MIGRATION_GROUPS,
  AGENT_RUNTIME_MIGRATIONS_TABLE,
  DatabaseOptionsError,
  RuntimePolicyModule,
  ToolEndpoint,
  agentRuntimeDataSourceOptions,
  agentRuntimeMigrations,
  runAgentRuntimeMigrations,
  verifyAuditChain,
} from '../../src';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const AUDIT_LOG_TABLES = ['agent_runtime_migrations', 'agent_runtime_policy_audit_head', 'agent_runtime_policy_audit_log'];

@Controller('tools')
class ToolsController {
  @Post('shell')
  @ToolEndpoint({ tool: 'shell' })
  shell(@Body() body: unknown): unknown {
    return { ran: body };
  }
}

async function startApp(database: DynamicModule): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [database, RuntimePolicyModule.forRoot({ policy: { id: 'groups-policy', tools: { allow: ['search'], deny: ['shell'] } }, auditLog: 'postgres' })],
    controllers: [ToolsController],
  })
  class UserAppModule {}
  const app = await NestFactory.create(UserAppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}

const tablesOf = async (dataSource: DataSource): Promise<string[]> =>
  ((await dataSource.query(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`)) as Array<{ name: string }>).map((row) => row.name);

describe("an app with only the 'audit-log' migrations", () => {
  let database: FreshDatabase;
  let app: INestApplication | undefined;
  beforeEach(async () => {
    database = await createFreshDatabase({ migrate: false });
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await database.drop();
  });

  async function deniesAndAudits(): Promise<void> {
    const started = await startApp(
      TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(database.url, { modules: ['audit-log'] }), retryAttempts: 0 }),
    );
    app = started.app;
    const response = await fetch(`${started.url}/tools/shell`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"cmd":"ls"}' });
    expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 403 });
    const dataSource = app.get<DataSource>(getDataSourceToken());
    const rows = (await dataSource.query('SELECT seq, subject, outcome, reason FROM agent_runtime_policy_audit_log')) as unknown[];
    expect(rows).toEqual([{ seq: '1', subject: 'shell', outcome: 'deny', reason: 'explicitly_denied' }]);
    expect(await verifyAuditChain(dataSource)).toMatchObject({ ok: true, rows_checked: 1 });
    expect(await tablesOf(dataSource)).toEqual(AUDIT_LOG_TABLES);
  }

  it('applied by runAgentRuntimeMigrations: the app starts, a denial writes an audit row, only the audit-log tables exist', async () => {
    expect(await runAgentRuntimeMigrations(database.url, { modules: ['audit-log'] })).toEqual(['PolicyAuditLog1764400000000', 'PolicyAuditHeadGuard1764600000000']);
    await deniesAndAudits();
  });

  it("applied by TypeORM itself (migrations: agentRuntimeMigrations(['audit-log']), migrationsRun) with the package's migrations table", async () => {
    const started = await startApp(
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: database.url,
        migrations: agentRuntimeMigrations(['audit-log']),
        migrationsTableName: AGENT_RUNTIME_MIGRATIONS_TABLE,
        migrationsRun: true,
        retryAttempts: 0,
      }),
    );
    await started.app.close();
    await deniesAndAudits();
  });
});

describe('agentRuntimeMigrations and the data source options', () => {
  const names = (migrations: Function[]) => migrations.map((migration) => migration.name);

  it('every group, in timestamp order, when no module is named; a selection keeps that order', () => {
    expect(AGENT_RUNTIME_MIGRATION_GROUPS).toEqual(['audit-log', 'ledger', 'sessions', 'evaluation', 'artifacts', 'memory', 'cluster']);
    expect(names(agentRuntimeMigrations())).toHaveLength(14);
    expect(names(agentRuntimeMigrations(['memory', 'audit-log', 'ledger']))).toEqual([
      'PolicyAuditLog1764400000000',
      'InvocationLedger1764500000000',
      'PolicyAuditHeadGuard1764600000000',
      'RuntimeMemory1764900000001',
      'MemoryOutbox1764900000002',
    ]);
    expect(names(agentRuntimeMigrations(['cluster']))).toEqual(['ClusterInstances1765000000000', 'ClusterAdmission1765000000001', 'ClusterRuns1765000000002', 'RunOwnerPrincipal1765100000000', 'ClusterInstanceGrace1765200000000', 'ClusterAdmissionFlow1765300000000']);
    expect(agentRuntimeMigrations([])).toEqual([]);
  });

  it('an unknown module is a typed error naming the field, never a silent skip', () => {
    for (const modules of [['audit-log', 'audit_log'], 'audit-log', [undefined]]) {
      const error = (() => {
        try {
          agentRuntimeMigrations(modules as never);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(DatabaseOptionsError);
      expect(error).toMatchObject({ code: 'invalid_database_options', details: { field: 'modules' } });
    }
    expect(() => agentRuntimeDataSourceOptions('postgres://h/db', { modules: ['ledgers' as never] })).toThrow(DatabaseOptionsError);
  });

  it('a missing or empty URL is a typed error, so process.env.DATABASE_URL can be passed as it is', async () => {
    for (const url of [undefined, '', '   ']) {
      expect(() => agentRuntimeDataSourceOptions(url)).toThrow(expect.objectContaining({ code: 'invalid_database_options', details: { field: 'url' } }));
      await expect(runAgentRuntimeMigrations(url)).rejects.toMatchObject({ code: 'invalid_database_options', details: { field: 'url' } });
    }
  });

  it('carries the modules asked for and the package migrations table; TypeORM options win', () => {
    const options = agentRuntimeDataSourceOptions('postgres://h/db', { modules: ['ledger'], extra: { max: 3 } });
    expect(options).toMatchObject({ type: 'postgres', url: 'postgres://h/db', synchronize: false, migrationsRun: false, migrationsTableName: 'agent_runtime_migrations', extra: { max: 3 } });
    expect(names(options.migrations as Function[])).toEqual(['InvocationLedger1764500000000']);
    expect(options).not.toHaveProperty('modules');
  });
});

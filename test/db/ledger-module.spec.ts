import { Injectable, Module, type ModuleMetadata, type Provider } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { SchemaValidatorError } from '../../src/database/schema-validator.errors';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LEDGER_OPERATION_EVENT } from '../../src/ledger/ledger.constants';
import { LedgerError } from '../../src/ledger/ledger.errors';
import { LedgerHealthIndicator } from '../../src/ledger/ledger.health';
import { LedgerModule, type LedgerModuleOptions, type LedgerOptionsFactory } from '../../src/ledger/ledger.module';
import { META, serverSql, useLedgerHarness } from '../support/ledger-harness';

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const typeOrm = (url: string, name?: string) =>
  TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(url), name, retryAttempts: 0, extra: { application_name: 'ledger-app' } });

/** Compiles and initialises an app; the returned error is what start-up failed with. */
async function boot(imports: NonNullable<ModuleMetadata['imports']>, providers: Provider[] = []): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports, providers }).compile();
  try {
    await moduleRef.init();
  } catch (error) {
    await moduleRef.close().catch(() => {});
    throw error;
  }
  return moduleRef;
}

describe('§8 Nest module: start-up', () => {
  const h = useLedgerHarness();
  const apps: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('forRoot boots on a correct schema and provides a started InvocationLedger with the options', async () => {
    const app = await boot([typeOrm(h().database.url), LedgerModule.forRoot({ instanceId: 'nest-1', defaultLeaseMs: 5000 })]);
    apps.push(app);
    const ledger = app.get(InvocationLedger);
    expect(ledger.status()).toEqual({ state: 'started', lock_held: true });
    expect(ledger.instanceId).toBe('nest-1');
    expect(ledger.defaultLeaseMs).toBe(5000);
    await ledger.create('inv', META, null);
    expect(await ledger.claim('inv', { leaseMs: ledger.defaultLeaseMs })).toMatchObject({ invocation: { owner_instance: 'nest-1' } });
  });

  it('a wrong schema fails start-up within seconds with the app-wide schema_mismatch naming every difference', async () => {
    await h().sql('ALTER TABLE agent_runtime_invocations DROP COLUMN outcome');
    await h().sql('DROP INDEX agent_runtime_invocations_owner_instance_idx');
    const startedAt = Date.now();
    const error = await boot([typeOrm(h().database.url), LedgerModule.forRoot()]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    // the one start-up report of every module (StartupSchemaCheck), each mismatch naming its module
    expect(error).toBeInstanceOf(SchemaValidatorError);
    expect(error).toMatchObject({ code: 'schema_mismatch' });
    expect(((error as SchemaValidatorError).details?.mismatches as Array<{ module: string; property: string }>).map((m) => [m.module, m.property])).toEqual([
      ['ledger', 'column:outcome'],
      ['ledger', 'index:agent_runtime_invocations_owner_instance_idx'],
    ]);
    expect(await h().advisoryLocks()).toEqual([]);
  });

  it.each<[string, unknown, Record<string, unknown>]>([
    ['an unknown key', { instanceId: 'x', leaseMs: 10 }, { field: 'leaseMs' }],
    ['a table name longer than 44 characters', { tableName: 'a'.repeat(45) }, { field: 'tableName' }],
    ['a bad instanceId', { instanceId: 'has space' }, { field: 'instanceId' }],
    ['a bad dataSourceName', { dataSourceName: '' }, { field: 'dataSourceName' }],
    ['a dataSourceName behind a getter', Object.defineProperty({}, 'dataSourceName', { get: () => 'x', enumerable: true }), { field: 'dataSourceName' }],
    ['a getter beside a valid dataSourceName', Object.defineProperty({ dataSourceName: 'default' }, 'instanceId', { get: () => 'x', enumerable: true }), { field: 'instanceId' }],
    ['a Proxy', new Proxy({}, {}), { field: 'options' }],
  ])('%s fails start-up with invalid_ledger_options', async (_name, options, details) => {
    const error = await boot([typeOrm(h().database.url), LedgerModule.forRoot(options as LedgerModuleOptions)]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'invalid_ledger_options', details });
  });

  it('forRootAsync takes options from a factory with imports and inject, on a named DataSource', async () => {
    @Injectable()
    class LedgerConfig {
      readonly instanceId = 'from-config';
    }
    @Module({ providers: [LedgerConfig], exports: [LedgerConfig] })
    class ConfigModule {}
    const app = await boot([
      typeOrm(h().database.url, 'ledgerdb'),
      LedgerModule.forRootAsync({
        dataSourceName: 'ledgerdb',
        imports: [ConfigModule],
        inject: [LedgerConfig],
        useFactory: async (config: LedgerConfig) => ({ instanceId: config.instanceId, dataSourceName: 'ledgerdb' }),
      }),
    ]);
    apps.push(app);
    expect(app.get(InvocationLedger).instanceId).toBe('from-config');
    await app.get(InvocationLedger).create('inv', META, null);
  });

  it('forRootAsync refuses a factory that names another DataSource than the module', async () => {
    const error = await boot([
      typeOrm(h().database.url),
      LedgerModule.forRootAsync({ useFactory: () => ({ dataSourceName: 'other' }) }),
    ]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'invalid_ledger_options', details: { field: 'dataSourceName' } });
  });

  it('forRootAsync takes options from a useClass factory (createLedgerOptions) with its injected dependency', async () => {
    @Injectable()
    class InstanceName {
      readonly value = 'from-class';
    }
    @Module({ providers: [InstanceName], exports: [InstanceName] })
    class NamesModule {}
    @Injectable()
    class LedgerConfig implements LedgerOptionsFactory {
      constructor(private readonly name: InstanceName) {}
      async createLedgerOptions(): Promise<LedgerModuleOptions> {
        return { instanceId: this.name.value };
      }
    }
    const app = await boot([typeOrm(h().database.url), LedgerModule.forRootAsync({ imports: [NamesModule], useClass: LedgerConfig })]);
    apps.push(app);
    expect(app.get(InvocationLedger).instanceId).toBe('from-class');
  });

  it('forRootAsync takes options from a useExisting factory exported by an imported module', async () => {
    @Injectable()
    class LedgerConfig implements LedgerOptionsFactory {
      createLedgerOptions(): LedgerModuleOptions {
        return { instanceId: 'from-existing', dataSourceName: 'ledgerdb' };
      }
    }
    @Module({ providers: [LedgerConfig], exports: [LedgerConfig] })
    class ConfigModule {}
    const app = await boot([
      typeOrm(h().database.url, 'ledgerdb'),
      LedgerModule.forRootAsync({ dataSourceName: 'ledgerdb', imports: [ConfigModule], useExisting: LedgerConfig }),
    ]);
    apps.push(app);
    expect(app.get(InvocationLedger).instanceId).toBe('from-existing');
  });

  it.each<[string, () => unknown, Record<string, unknown>]>([
    ['no factory', () => LedgerModule.forRootAsync({}), { field: 'forRootAsync' }],
    ['two factories', () => LedgerModule.forRootAsync({ useFactory: () => ({}), useExisting: class {} as never }), { fields: ['useExisting', 'useFactory'] }],
    ['an empty dataSourceName', () => LedgerModule.forRootAsync({ dataSourceName: '', useFactory: () => ({}) }), { field: 'dataSourceName' }],
    ['an unknown key', () => LedgerModule.forRootAsync({ useFactory: () => ({}), injects: [] } as never), { field: 'injects' }],
  ])('forRootAsync with %s is refused when declared with invalid_ledger_options', (_name, declare, details) => {
    let caught: unknown;
    try {
      declare();
    } catch (error) {
      caught = error;
    }
    expect(LedgerError.isLedgerError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'invalid_ledger_options', details });
  });
});

describe('§8 Nest module: health, shutdown and telemetry', () => {
  const h = useLedgerHarness();

  it('the health indicator is up with lock_held while the lock is held, down when the lock connection is killed, and up again after the reconnect', async () => {
    // the module provides its indicator: the app does not list it
    const app = await boot([typeOrm(h().database.url), LedgerModule.forRoot({ instanceId: 'health-1' })]);
    try {
      const indicator = app.get(LedgerHealthIndicator);
      expect(await indicator.isHealthy()).toEqual({ invocation_ledger: { status: 'up', lock_held: true } });
      expect(await indicator.isHealthy('ledger')).toEqual({ ledger: { status: 'up', lock_held: true } });
      const [{ db }] = await h().sql<{ db: string }>('SELECT current_database() AS db');
      // the reconnect is held off so that the down state can be observed
      await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
      try {
        await h().terminateLockHolders();
        await until(async () => (await indicator.isHealthy()).invocation_ledger.status === 'down');
        expect(await indicator.isHealthy()).toEqual({ invocation_ledger: { status: 'down', lock_held: false } });
      } finally {
        await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
      }
      await until(async () => (await indicator.isHealthy()).invocation_ledger.status === 'up');
    } finally {
      await app.close();
    }
  });

  it('the health indicator is down when the database stops answering the pool', async () => {
    const app = await boot([typeOrm(h().database.url), LedgerModule.forRoot()]);
    try {
      const indicator = app.get(LedgerHealthIndicator);
      const [{ db }] = await h().sql<{ db: string }>('SELECT current_database() AS db');
      await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
      try {
        // every pooled session, but not the lock connection
        await h().sql(
          `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ledger-app'
             AND pid <> ALL($1::int[])`,
          [(await h().advisoryLocks()).map((lock) => lock.pid)],
        );
        await until(async () => (await indicator.isHealthy()).invocation_ledger.status === 'down');
        expect(await indicator.isHealthy()).toEqual({ invocation_ledger: { status: 'down', lock_held: true } });
      } finally {
        await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
      }
    } finally {
      await app.close();
    }
  });

  it('the indicator listed beside TerminusModule still serves a HealthCheckService check', async () => {
    const app = await boot([typeOrm(h().database.url), TerminusModule, LedgerModule.forRoot()], [LedgerHealthIndicator]);
    try {
      const indicator = app.get(LedgerHealthIndicator);
      expect(await app.get(HealthCheckService).check([() => indicator.isHealthy()])).toEqual({
        status: 'ok',
        info: { invocation_ledger: { status: 'up', lock_held: true } },
        error: {},
        details: { invocation_ledger: { status: 'up', lock_held: true } },
      });
    } finally {
      await app.close();
    }
  });

  it('application shutdown closes the ledger: operations are refused and the instance lock is released', async () => {
    const app = await boot([typeOrm(h().database.url), LedgerModule.forRoot({ instanceId: 'closing-1' })]);
    const ledger = app.get(InvocationLedger);
    expect(await h().advisoryLocks()).toHaveLength(1);
    await app.close();
    expect(ledger.status()).toEqual({ state: 'closed', lock_held: false });
    await expect(ledger.get('x')).rejects.toMatchObject({ code: 'invalid_ledger_handle' });
    await until(async () => (await h().advisoryLocks()).length === 0);
  });

  it('operations are reported on EventEmitter2 as agent_runtime.ledger.operation when the event-emitter module is present', async () => {
    const app = await boot([EventEmitterModule.forRoot(), typeOrm(h().database.url), LedgerModule.forRoot()]);
    try {
      const events: unknown[] = [];
      app.get(EventEmitter2).on(LEDGER_OPERATION_EVENT, (payload: unknown) => events.push(payload));
      await app.get(InvocationLedger).create('inv', META, null);
      expect(events).toEqual([{ operation: 'create', outcome: 'ok', duration_ms: expect.any(Number), phase: 'ready' }]);
    } finally {
      await app.close();
    }
  });
});

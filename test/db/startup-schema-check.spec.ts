/**
 * `StartupSchemaCheck` on a real Postgres: one check of every registered module, one report of
 * every mismatch with its module, failures to read left to the modules' own start-up.
 */
import { SchemaValidatorError } from '../../src/database/schema-validator.errors';
import { StartupSchemaCheck, type SchemaCheckTarget } from '../../src/database/schema/startup-schema-check';
import { ledgerTableSpec } from '../../src/ledger/storage/ledger.schema';
import { AUDIT_TABLE_SPECS } from '../../src/policy/audit-log/audit-log.schema';
import { createRuntimeServices } from '../../src/services/bundle/runtime-services-factory';
import { openDatabaseHarness, useHarness } from '../support/database-harness';

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('StartupSchemaCheck', () => {
  const h = useHarness(() => openDatabaseHarness());

  it('rejects once with every mismatch of every module, each naming its module; a mismatch two modules share is listed once', async () => {
    await h().sql('ALTER TABLE agent_runtime_invocations DROP COLUMN outcome');
    await h().sql('ALTER TABLE agent_runtime_policy_audit_log ALTER COLUMN reason TYPE varchar(200)');
    const dataSource = await h().dataSource();
    const check = new StartupSchemaCheck();
    check.register('ledger', () => ({ dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] }));
    check.register('policy_audit_log', async () => ({ dataSource, specs: AUDIT_TABLE_SPECS }));
    // the same table declared by a second module: its mismatch stays under the first
    check.register('ledger_copy', () => ({ dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] }));

    const error = await rejection(check.assertAll());
    expect(error).toBeInstanceOf(SchemaValidatorError);
    expect((error as SchemaValidatorError).code).toBe('schema_mismatch');
    expect((error as SchemaValidatorError).details?.mismatches).toEqual([
      { module: 'ledger', table: 'agent_runtime_invocations', property: 'column:outcome', expected: 'jsonb null', actual: 'missing' },
      { module: 'policy_audit_log', table: 'agent_runtime_policy_audit_log', property: 'column:reason', expected: 'text not null', actual: 'character varying(200) not null' },
    ]);
    expect(String((error as Error).stack)).not.toMatch(/^\s+at /m);
    // every later caller (the next module's onModuleInit) gets the same report
    expect(await rejection(check.assertAll())).toBe(error);
  });

  it('validates each registration once; a module registered after a passing check is checked by the next call', async () => {
    const dataSource = await h().dataSource();
    const built: string[] = [];
    const check = new StartupSchemaCheck();
    const target = (module: string) => (): SchemaCheckTarget => (built.push(module), { dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] });
    check.register('ledger', target('ledger'));
    await check.assertAll();
    await check.assertAll();
    expect(built).toEqual(['ledger']);

    await h().sql('ALTER TABLE agent_runtime_invocations DROP COLUMN outcome');
    check.register('late', target('late'));
    const error = await rejection(check.assertAll());
    expect(built).toEqual(['ledger', 'late']);
    expect((error as SchemaValidatorError).details?.mismatches).toEqual([expect.objectContaining({ module: 'late', property: 'column:outcome' })]);
  });

  it('includes a registration made while the first caller waits (a provider Nest is still building)', async () => {
    await h().sql('ALTER TABLE agent_runtime_invocations DROP COLUMN outcome');
    const dataSource = await h().dataSource();
    const check = new StartupSchemaCheck();
    const checking = rejection(check.assertAll());
    await Promise.resolve();
    check.register('ledger', () => ({ dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] }));
    expect(((await checking) as SchemaValidatorError).details?.mismatches).toEqual([expect.objectContaining({ module: 'ledger', property: 'column:outcome' })]);
  });

  it('leaves out a module whose target cannot be built, is null or whose database cannot be read: their own start-up reports them', async () => {
    await h().sql('ALTER TABLE agent_runtime_invocations DROP COLUMN outcome');
    const dataSource = await h().dataSource();
    const unreachable = await h().dataSource();
    await unreachable.destroy();
    const check = new StartupSchemaCheck();
    check.register('bad_options', () => {
      throw new TypeError('invalid options');
    });
    check.register('no_tables', () => null);
    check.register('closed', () => ({ dataSource: unreachable, specs: AUDIT_TABLE_SPECS }));
    check.register('ledger', () => ({ dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] }));
    const error = await rejection(check.assertAll());
    expect((error as SchemaValidatorError).details?.mismatches).toEqual([expect.objectContaining({ module: 'ledger', property: 'column:outcome' })]);

    const quiet = new StartupSchemaCheck();
    quiet.register('bad_options', () => Promise.reject(new TypeError('invalid options')));
    quiet.register('closed', () => ({ dataSource: unreachable, specs: AUDIT_TABLE_SPECS }));
    await expect(quiet.assertAll()).resolves.toBeUndefined();
  });
});

describe('the bundle\'s schema stage (issue 23: the mismatches were dropped)', () => {
  const h = useHarness(() => openDatabaseHarness());

  it('names every mismatch in runtime_service_bundle_start_failed {stage: schema}', async () => {
    await h().sql('ALTER TABLE agent_runtime_memory_entries DROP COLUMN author');
    const supervisor = createRuntimeServices('durable_local', {}, { dataSource: await h().dataSource() });
    h().track(() => supervisor.stop());
    const error = await rejection(supervisor.start());
    expect(error).toMatchObject({ code: 'runtime_service_bundle_start_failed', details: { stage: 'schema', reason: 'schema_mismatch' } });
    expect((error as { details: { mismatches: unknown } }).details.mismatches).toEqual([
      { table: 'agent_runtime_memory_entries', property: 'column:author', expected: 'text not null', actual: 'missing' },
    ]);
  });

  it('passes the app\'s one report through unchanged when its start-up check fails', async () => {
    await h().sql('ALTER TABLE agent_runtime_invocations DROP COLUMN outcome');
    const dataSource = await h().dataSource();
    const check = new StartupSchemaCheck();
    check.register('ledger', () => ({ dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] }));
    const supervisor = createRuntimeServices('durable_local', {}, { dataSource, schemaCheck: () => check.assertAll() });
    h().track(() => supervisor.stop());
    const error = await rejection(supervisor.start());
    expect(error).toBe(await rejection(check.assertAll()));
    expect(error).toBeInstanceOf(SchemaValidatorError);
  });
});


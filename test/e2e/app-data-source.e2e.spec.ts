/**
 * The app's own DataSource, without `@nestjs/typeorm`: `RuntimePolicyModule` and `LedgerModule` take
 * it as the `dataSource` option (an app that builds its DataSource itself), and refuse `dataSource`
 * beside `dataSourceName`.
 */
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LedgerModule } from '../../src/ledger/ledger.module';
import { RuntimePolicyModule } from '../../src/policy/runtime-policy.module';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { BODY_CANARY, E2E_POLICY, startupError, usePolicyApps } from './support/policy-harness';

describe('modules on a DataSource the app passes (no @nestjs/typeorm)', () => {
  const start = usePolicyApps();
  let database: FreshDatabase;
  let dataSource: DataSource;

  beforeEach(async () => {
    database = await createFreshDatabase();
    dataSource = await new DataSource(agentRuntimeDataSourceOptions(database.url)).initialize();
  });
  afterEach(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it("auditLog: 'postgres' records a denial through the given DataSource, and the ledger runs on it", async () => {
    const t = await start({ imports: [LedgerModule.forRoot({ dataSource, instanceId: 'given-ds' })], moduleOptions: { auditLog: 'postgres', dataSource } });
    const denied = await t.post('/p/tools/shell', { cmd: BODY_CANARY });
    expect(denied.status).toBe(403);
    const rows = (await dataSource.query('SELECT decision_id, subject FROM agent_runtime_policy_audit_log')) as Array<{ decision_id: string; subject: string }>;
    expect(rows).toEqual([{ decision_id: denied.body.decision.decision_id, subject: 'shell' }]);

    const ledger = t.app.get(InvocationLedger);
    expect(ledger.status()).toEqual({ state: 'started', lock_held: true });
    expect(ledger.instanceId).toBe('given-ds');
  });

  it('dataSource beside dataSourceName is refused, naming both fields', async () => {
    const policyError = await startupError({ imports: [], moduleOptions: { auditLog: 'postgres', dataSource, dataSourceName: 'other' } });
    expect(policyError).toMatchObject({ code: 'invalid_runtime_policy_module_options', details: { fields: ['dataSource', 'dataSourceName'] } });

    expect(() => LedgerModule.forRoot({ dataSource, dataSourceName: 'other' })).toThrow(expect.objectContaining({ code: 'invalid_ledger_options', details: { fields: ['dataSource', 'dataSourceName'] } }));
  });

  it('a dataSource that is not a DataSource is refused at start-up', async () => {
    const error = await Test.createTestingModule({ imports: [RuntimePolicyModule.forRoot({ policy: E2E_POLICY, auditLog: 'postgres', dataSource: {} as DataSource })] })
      .compile()
      .then((app) => app.close().then(() => undefined), (caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_runtime_policy_module_options', details: { field: 'dataSource' } });
  });
});

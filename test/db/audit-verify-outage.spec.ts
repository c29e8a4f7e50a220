import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { poolOf } from '../../src/database/postgres-pool';
import { agentRuntimeErrorAnswer } from '../../src/http/http-error-mapper';
import { PostgresAuditLog } from '../../src/policy/audit-log/postgres-audit-log';
import { RuntimePolicyError } from '../../src/policy/runtime-policy.errors';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

/**
 * Verifying the audit chain while its database refuses connections is an outage: 503
 * `runtime_policy_audit_log_unavailable` with the SQLSTATE only, never a 500 or the server's text;
 * once the database answers again the same log verifies.
 */
describe('PostgresAuditLog.verify while the database refuses connections', () => {
  let database: FreshDatabase;
  let dataSource: DataSource;

  const setConnections = async (allow: boolean) => {
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      const name = new URL(database.url).pathname.slice(1);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS ${allow ? 'true' : 'false'}`);
      if (!allow) await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    } finally {
      await admin.end();
    }
  };

  beforeAll(async () => {
    database = await createFreshDatabase();
    dataSource = await new DataSource(agentRuntimeDataSourceOptions(database.url)).initialize();
  });

  afterAll(async () => {
    await setConnections(true).catch(() => undefined);
    await dataSource?.destroy().catch(() => undefined);
    await database?.drop();
  });

  it('rejects with a 503 code and the SQLSTATE, then verifies again once connections are allowed', async () => {
    const log = new PostgresAuditLog(dataSource);
    await log.init();
    await setConnections(false);
    // the pool drops its terminated idle clients when their error event arrives; until then a query
    // could take one and fail 57P01 (terminated) instead of reaching the refusal this test is about
    const pool = poolOf(dataSource) as unknown as { idleCount: number };
    const droppedBy = Date.now() + 5000;
    while (pool.idleCount > 0 && Date.now() < droppedBy) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pool.idleCount).toBe(0);

    const failure = await log.verify().then(
      () => null,
      (error: unknown) => error,
    );
    expect(RuntimePolicyError.isRuntimePolicyError(failure)).toBe(true);
    const error = failure as RuntimePolicyError;
    expect(error.code).toBe('runtime_policy_audit_log_unavailable');
    expect(error.details).toEqual({ sqlstate: '55000', socket_error: null });
    expect(JSON.stringify(error)).not.toMatch(/accepting|connections|agent_runtime_t_/);
    expect(agentRuntimeErrorAnswer(error)).toMatchObject({ status: 503, body: { code: 'runtime_policy_audit_log_unavailable' } });

    await setConnections(true);
    await expect(log.verify()).resolves.toMatchObject({ ok: true });
  });
});

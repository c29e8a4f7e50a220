/**
 * `RuntimePolicyModule.forRoot({auditLog: 'postgres'})` with TypeORM on a fresh real database
 * (spec 02 §8, §9): denials become hash-chained rows that verify, allows too with
 * `auditDecisions: 'all'`, a broken database fails requests closed, and a database without the
 * migrations stops start-up with `schema_mismatch`.
 */
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { AuditSink } from '../../src/policy/audit-log/audit-sink';
import { AuditChainVerifier } from '../../src/policy/audit-log/audit-chain-verifier';
import { AUDIT_LOG_TABLE, GENESIS_HASH } from '../../src/policy/audit-log/audit-log.constants';
import { AUDIT_LOG_TABLE_SPEC } from '../../src/policy/audit-log/audit-log.schema';
import { describeTriggerSpec } from '../../src/database/schema/trigger-comparison';
import { verifyAuditChain } from '../../src/policy/audit-log/audit-chain-verification';
import { canonicalJson } from '../../src/json';
import { DeferredPostgresAuditLog } from '../../src/policy/audit-log/deferred-postgres-audit-log.service';
import { summarizeDecision, verifyDecisionDigest, type PolicyDecision } from '../../src/policy/policy-decision';
import { SchemaValidatorError } from '../../src/database/schema-validator.errors';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import {
  argsOfSize,
  ARG_LIMIT,
  BODY_CANARY,
  RESULT_CANARY,
  startupError,
  usePolicyApps,
  type PolicyApp,
  type PolicyAppOptions,
} from './support/policy-harness';

interface AuditRow {
  seq: string;
  decision_id: string;
  policy_id: string;
  operation: string;
  subject: string;
  outcome: string;
  reason: string;
  decision_json: string;
  prev_hash: string;
  row_hash: string;
}

describe("runtime policy with auditLog: 'postgres'", () => {
  const start = usePolicyApps();
  const databases: FreshDatabase[] = [];

  /** A fresh database (dropped after the test). */
  async function freshDatabase(migrate = true): Promise<FreshDatabase> {
    const database = await createFreshDatabase({ migrate });
    databases.push(database);
    return database;
  }

  afterEach(async () => {
    // the apps (and their pools) are closed by usePolicyApps' afterEach, registered first
    await Promise.all(databases.splice(0).map((database) => database.drop()));
  });

  function postgresApp(url: string, moduleOptions: PolicyAppOptions['moduleOptions'] = {}): PolicyAppOptions {
    return {
      imports: [TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(url), retryAttempts: 0 })],
      moduleOptions: { auditLog: 'postgres', ...moduleOptions },
    };
  }

  const dataSourceOf = (t: PolicyApp): DataSource => t.app.get<DataSource>(getDataSourceToken());
  const rowsOf = (t: PolicyApp): Promise<AuditRow[]> =>
    dataSourceOf(t).query(
      `SELECT seq, decision_id, policy_id, operation, subject, outcome, reason, decision_json, prev_hash, row_hash
         FROM agent_runtime_policy_audit_log ORDER BY seq`,
    );

  it('stores every denial as a chained row holding the decision summarised to the client, and the chain verifies', async () => {
    const database = await freshDatabase();
    const t = await start(postgresApp(database.url));
    const sink = t.app.get(AuditSink);
    expect(sink).toBeInstanceOf(DeferredPostgresAuditLog);

    expect((await t.post('/p/agents/helper', { prompt: 'allowed' })).status).toBe(200);
    const denials = [
      await t.post('/p/agents/stranger', { prompt: BODY_CANARY }),
      await t.post('/p/tools/shell', { cmd: BODY_CANARY }),
      await t.post('/p/tools/search', argsOfSize(ARG_LIMIT + 1, BODY_CANARY)),
    ];
    t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
    denials.push(await t.post('/p/agents/helper', {}));
    expect(denials.map((result) => result.status)).toEqual([403, 403, 413, 413]);

    const rows = await rowsOf(t);
    expect(rows.map((row) => Number(row.seq))).toEqual([1, 2, 3, 4]);
    expect(rows.map((row) => row.decision_id)).toEqual(denials.map((result) => result.body.decision.decision_id));
    expect(rows.map((row) => [row.operation, row.subject, row.outcome, row.reason, row.policy_id])).toEqual([
      ['agent_invocation', 'stranger', 'deny', 'not_allowed', 'e2e-policy'],
      ['tool_call', 'shell', 'deny', 'explicitly_denied', 'e2e-policy'],
      ['tool_call', 'search', 'deny', 'argument_budget_exceeded', 'e2e-policy'],
      ['content', 'model_output', 'deny', 'content_budget_exceeded', 'e2e-policy'],
    ]);
    for (const [i, row] of rows.entries()) {
      const decision = JSON.parse(row.decision_json) as PolicyDecision;
      expect(canonicalJson(decision)).toBe(row.decision_json);
      expect(verifyDecisionDigest(decision)).toBe(true);
      expect(summarizeDecision(decision)).toEqual(denials[i].body.decision);
      expect(row.prev_hash).toBe(i === 0 ? GENESIS_HASH : rows[i - 1].row_hash);
    }
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(BODY_CANARY);
    expect(stored).not.toContain(RESULT_CANARY);

    const report = await t.app.get<AuditChainVerifier>(AuditChainVerifier).verify();
    expect(report).toMatchObject({ ok: true, rows_checked: 4, head_seq: 4, head_hash: rows[3].row_hash, first_broken: null });
    expect(await verifyAuditChain(dataSourceOf(t))).toMatchObject({ ok: true, rows_checked: 4 });
  });

  it("stores allows too with auditDecisions: 'all', one row per check", async () => {
    const database = await freshDatabase();
    const t = await start(postgresApp(database.url, { auditDecisions: 'all' }));
    expect((await t.post('/p/tools/search', { q: 'a' })).status).toBe(200);
    expect((await t.post('/p/agents/stranger', {})).status).toBe(403);

    const rows = await rowsOf(t);
    expect(rows.map((row) => [Number(row.seq), row.operation, row.subject, row.outcome])).toEqual([
      [1, 'tool_call', 'search', 'allow'],
      [2, 'content', 'tool_result', 'allow'],
      [3, 'agent_invocation', 'stranger', 'deny'],
    ]);
    const report = await t.app.get<AuditChainVerifier>(AuditChainVerifier).verify();
    expect(report).toMatchObject({ ok: true, rows_checked: 3, head_seq: 3 });
  });

  it('fails closed with 503 when the database cannot store the decision; the handler does not run', async () => {
    const database = await freshDatabase();
    const t = await start(postgresApp(database.url, { auditDecisions: 'all', auditTimeoutMs: 2_000 }));
    expect((await t.post('/p/agents/helper', {})).status).toBe(200);

    // break the chain head behind the app's back (DDL is not blocked by the log's triggers)
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('ALTER TABLE agent_runtime_policy_audit_head RENAME TO agent_runtime_policy_audit_head_gone');
    } finally {
      await admin.end();
    }

    const allowed = await t.post('/p/agents/helper', { prompt: BODY_CANARY });
    const denied = await t.post('/p/agents/stranger', { prompt: BODY_CANARY });
    for (const result of [allowed, denied]) {
      expect({ status: result.status, body: result.body }).toEqual({
        status: 503,
        body: { status_code: 503, error: 'Service Unavailable', code: 'runtime_policy_audit_persistence_failed' },
      });
      expect(result.headers['retry-after']).toBe('1');
      expect(result.text).not.toContain(BODY_CANARY);
      expect(result.text).not.toContain('agent_runtime_policy_audit_head');
    }
    expect(t.probe.ran).toEqual(['agents/helper']);
    const errors = t.logger.ofLevel('error').filter((line) => line.includes('decision-'));
    expect(errors).toHaveLength(2);
    for (const line of errors) {
      expect(line.match(/decision-[0-9a-f-]+/g)).toHaveLength(1);
      expect(line).not.toContain('agent_runtime_policy_audit_head');
      expect(line).not.toContain('does not exist');
    }
    expect(t.logText()).not.toContain(BODY_CANARY);
  });

  it('fails start-up with schema_mismatch naming a disabled append-only trigger of the log', async () => {
    const database = await freshDatabase();
    const [noChange] = AUDIT_LOG_TABLE_SPEC.triggers ?? [];
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(`ALTER TABLE ${AUDIT_LOG_TABLE} DISABLE TRIGGER ${noChange.name}`);
    } finally {
      await admin.end();
    }
    // the app-wide start-up report (StartupSchemaCheck): each mismatch names its module
    const error = await startupError(postgresApp(database.url));
    expect(error).toBeInstanceOf(SchemaValidatorError);
    expect(error.code).toBe('schema_mismatch');
    expect(error.details.mismatches).toEqual([
      { module: 'policy_audit_log', table: AUDIT_LOG_TABLE, property: `trigger:${noChange.name}`, expected: describeTriggerSpec(noChange), actual: 'disabled' },
    ]);
  });

  it('fails start-up with schema_mismatch naming the missing table on a database without the migrations', async () => {
    const database = await freshDatabase(false);
    const error = await startupError(postgresApp(database.url));
    expect(error).toBeInstanceOf(SchemaValidatorError);
    expect(error.code).toBe('schema_mismatch');
    expect(error.details.mismatches).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ table: 'agent_runtime_policy_audit_log', property: 'table', expected: 'present', actual: 'missing' }),
        expect.objectContaining({ table: 'agent_runtime_policy_audit_head', property: 'table', expected: 'present', actual: 'missing' }),
      ]),
    );
    // the validator never creates the tables
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT to_regclass('agent_runtime_policy_audit_log') AS log`);
      expect(rows[0].log).toBeNull();
    } finally {
      await client.end();
    }
  });
});

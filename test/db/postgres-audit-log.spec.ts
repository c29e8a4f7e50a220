import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { canonicalJson } from '../../src/json';
import { PostgresAuditLog } from '../../src/policy/audit-log/postgres-audit-log';
import { AUDIT_HEAD_TABLE, AUDIT_LOG_TABLE, GENESIS_HASH } from '../../src/policy/audit-log/audit-log.constants';
import type { PolicyDecision } from '../../src/policy/policy-decision';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { RuntimePolicyError } from '../../src/policy/runtime-policy.errors';
import { sha256Hex } from '../../src/shared/text/sha256';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const policy = RuntimePolicy.compile({ id: 'audit-test', agents: { allow: ['helper'] }, tools: { allow: ['search'], deny: ['shell'] } });
const decisions = (n: number): PolicyDecision[] => Array.from({ length: n }, (_, i) => policy.checkTool(i % 2 ? 'shell' : 'search', { i }));

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs SQL with the append-only triggers of log and head switched off, as an attacker with table ownership could. */
function tamper(url: string, sql: string): Promise<unknown> {
  return withClient(url, async (client) => {
    for (const table of [AUDIT_LOG_TABLE, AUDIT_HEAD_TABLE]) await client.query(`ALTER TABLE ${table} DISABLE TRIGGER USER`);
    await client.query(sql);
    for (const table of [AUDIT_LOG_TABLE, AUDIT_HEAD_TABLE]) await client.query(`ALTER TABLE ${table} ENABLE TRIGGER USER`);
  });
}

describe('PostgresAuditLog (spec 02 §9)', () => {
  let database: FreshDatabase;
  let dataSource: DataSource;
  let log: PostgresAuditLog;

  beforeEach(async () => {
    database = await createFreshDatabase();
    dataSource = await createAgentRuntimeDataSource(database.url).initialize();
    log = new PostgresAuditLog(dataSource);
    await log.init();
  });

  afterEach(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  describe('record', () => {
    it('appends rows 1..N whose hashes chain from genesis, and moves the head', async () => {
      const [first, second] = decisions(2);
      await log.record(first);
      await log.record(second);
      const rows = await dataSource.query('SELECT seq, decision_json, prev_hash, row_hash FROM agent_runtime_policy_audit_log ORDER BY seq');
      expect(rows.map((row: { seq: string }) => row.seq)).toEqual(['1', '2']);
      expect(rows[0].decision_json).toBe(canonicalJson(first));
      expect(rows[0].prev_hash).toBe(GENESIS_HASH);
      expect(rows[0].row_hash).toBe(sha256Hex(GENESIS_HASH + canonicalJson(first)));
      expect(rows[1].prev_hash).toBe(rows[0].row_hash);
      const [head] = await dataSource.query('SELECT last_seq, last_hash FROM agent_runtime_policy_audit_head');
      expect(head).toEqual({ last_seq: '2', last_hash: rows[1].row_hash });
    });

    it('copies the queryable fields into their columns', async () => {
      const [decision] = decisions(1);
      await log.record(decision);
      const [row] = await dataSource.query('SELECT decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason, policy_fingerprint FROM agent_runtime_policy_audit_log');
      expect(row).toEqual({
        decision_id: decision.decision_id,
        decided_at_ms: String(decision.decided_at_ms),
        policy_id: 'audit-test',
        operation: 'tool_call',
        subject: 'search',
        outcome: 'allow',
        reason: 'allowed',
        policy_fingerprint: policy.fingerprint,
      });
    });

    it('treats the same decision twice as one (an idempotent retry)', async () => {
      const [decision] = decisions(1);
      await log.record(decision);
      await log.record(decision);
      const [{ count }] = await dataSource.query('SELECT count(*)::int AS count FROM agent_runtime_policy_audit_log');
      expect(count).toBe(1);
    });

    it('stores one row when two connections record the same decision at once', async () => {
      const other = await createAgentRuntimeDataSource(database.url).initialize();
      try {
        const [decision] = decisions(1);
        const otherLog = new PostgresAuditLog(other);
        await Promise.all([log.record(decision), otherLog.record(decision), log.record(decision), otherLog.record(decision)]);
      } finally {
        await other.destroy();
      }
      const [{ count }] = await dataSource.query('SELECT count(*)::int AS count FROM agent_runtime_policy_audit_log');
      expect(count).toBe(1);
      expect(await log.verifyChain()).toMatchObject({ ok: true, head_seq: 1 });
    });

    it('chains non-ASCII decisions with the hash JavaScript computes over their UTF-8 bytes', async () => {
      const unicode = RuntimePolicy.compile({ id: 'política-✓', tools: { allow: ['búsqueda-𝄞'] } }).checkTool('búsqueda-𝄞', {});
      await log.record(unicode);
      const [row] = await dataSource.query('SELECT decision_json, row_hash FROM agent_runtime_policy_audit_log');
      expect(row.decision_json).toBe(canonicalJson(unicode));
      expect(row.row_hash).toBe(sha256Hex(GENESIS_HASH + canonicalJson(unicode)));
    });

    it('refuses a non-decision, a tampered digest, or different JSON under a stored id, writing nothing', async () => {
      const [decision] = decisions(1);
      const forged = { ...decision, subject: 'other' };
      await expect(log.record(forged as PolicyDecision)).rejects.toMatchObject({ code: 'invalid_runtime_policy_audit_event' });
      await expect(log.record({ hello: 'world' } as unknown as PolicyDecision)).rejects.toMatchObject({ code: 'invalid_runtime_policy_audit_event' });
      await log.record(decision);
      const sameIdOtherDecision = policy.checkTool('search', {});
      const clash = JSON.parse(JSON.stringify(sameIdOtherDecision)) as Record<string, unknown>;
      clash.decision_id = decision.decision_id;
      delete clash.decision_digest;
      clash.decision_digest = sha256Hex(canonicalJson(clash));
      await expect(log.record(clash as unknown as PolicyDecision)).rejects.toMatchObject({ code: 'invalid_runtime_policy_audit_event' });
      const [{ count }] = await dataSource.query('SELECT count(*)::int AS count FROM agent_runtime_policy_audit_log');
      expect(count).toBe(1);
    });

    it('reports a database failure as runtime_policy_audit_persistence_failed with only the SQLSTATE', async () => {
      await withClient(database.url, (client) => client.query('ALTER TABLE agent_runtime_policy_audit_head RENAME TO audit_head_moved'));
      const error = await log.record(decisions(1)[0]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RuntimePolicyError);
      expect(error).toMatchObject({ code: 'runtime_policy_audit_persistence_failed', details: { sqlstate: '42P01' } });
      expect((error as Error).message).not.toContain('audit_head');
    });

    it('keeps the log append-only: UPDATE, DELETE and TRUNCATE raise', async () => {
      await log.record(decisions(1)[0]);
      for (const sql of [
        `UPDATE agent_runtime_policy_audit_log SET subject = 'x'`,
        'DELETE FROM agent_runtime_policy_audit_log',
        'TRUNCATE agent_runtime_policy_audit_log',
      ]) {
        await expect(dataSource.query(sql)).rejects.toThrow(/append-only/);
      }
    });
  });

  describe('concurrent writers', () => {
    it('4 writers on their own connections × 500 appends make one unbroken chain', async () => {
      const writers = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const own = await createAgentRuntimeDataSource(database.url, { poolSize: 2 } as object).initialize();
          return { own, log: new PostgresAuditLog(own) };
        }),
      );
      try {
        await Promise.all(
          writers.map(async (writer) => {
            for (const decision of decisions(500)) await writer.log.record(decision);
          }),
        );
      } finally {
        await Promise.all(writers.map((writer) => writer.own.destroy()));
      }
      const report = await log.verifyChain({ batchSize: 300 });
      expect(report).toMatchObject({ ok: true, rows_checked: 2000, head_seq: 2000, first_broken: null });
      const [{ min, max, count }] = await dataSource.query('SELECT min(seq)::int AS min, max(seq)::int AS max, count(*)::int AS count FROM agent_runtime_policy_audit_log');
      expect({ min, max, count }).toEqual({ min: 1, max: 2000, count: 2000 });
    }, 120_000);
  });

  describe('verification', () => {
    beforeEach(async () => {
      for (const decision of decisions(5)) await log.record(decision);
    });

    it('passes an intact chain with a frozen, content-free report', async () => {
      const report = await log.verifyChain({ batchSize: 2 });
      expect(Object.isFrozen(report)).toBe(true);
      expect(Object.keys(report).sort()).toEqual(['first_broken', 'head_hash', 'head_seq', 'ok', 'rows_checked', 'schema_version', 'verified_at_ms']);
      expect(report).toMatchObject({ schema_version: 1, ok: true, rows_checked: 5, head_seq: 5, first_broken: null });
    });

    it('passes an empty log at genesis', async () => {
      const empty = await createFreshDatabase();
      const emptySource = await createAgentRuntimeDataSource(empty.url).initialize();
      try {
        expect(await new PostgresAuditLog(emptySource).verifyChain()).toMatchObject({ ok: true, rows_checked: 0, head_seq: 0, head_hash: GENESIS_HASH });
      } finally {
        await emptySource.destroy();
        await empty.drop();
      }
    });

    it.each([
      ['a hashed decision', `UPDATE agent_runtime_policy_audit_log SET decision_json = replace(decision_json, '"search"', '"sear"') WHERE seq = 3`, 3, 'row_hash_mismatch'],
      ['a copied column', `UPDATE agent_runtime_policy_audit_log SET subject = 'tampered' WHERE seq = 2`, 2, 'column_mismatch'],
      ['a prev_hash', `UPDATE agent_runtime_policy_audit_log SET prev_hash = repeat('a', 64) WHERE seq = 4`, 4, 'prev_hash_mismatch'],
      ['a middle row deleted', 'DELETE FROM agent_runtime_policy_audit_log WHERE seq = 2', 3, 'sequence_gap'],
      ['the last row deleted', 'DELETE FROM agent_runtime_policy_audit_log WHERE seq = 5', 5, 'head_mismatch'],
    ])('names the first broken row when %s is altered', async (_what, sql, seq, reason) => {
      await tamper(database.url, sql);
      const report = await log.verifyChain({ batchSize: 2 });
      expect(report).toMatchObject({ ok: false, first_broken: { seq, reason } });
    });

    it('reports a rewritten row whose hashes were recomputed as a broken digest', async () => {
      const [row] = await dataSource.query('SELECT decision_json, prev_hash FROM agent_runtime_policy_audit_log WHERE seq = 5');
      const json = (row.decision_json as string).replace('"tool_call"', '"content"');
      await tamper(database.url, `UPDATE agent_runtime_policy_audit_log SET decision_json = '${json}', operation = 'content', row_hash = '${sha256Hex(row.prev_hash + json)}' WHERE seq = 5`);
      await tamper(database.url, `UPDATE agent_runtime_policy_audit_head SET last_hash = '${sha256Hex(row.prev_hash + json)}'`);
      expect(await log.verifyChain()).toMatchObject({ ok: false, first_broken: { seq: 5, reason: 'decision_digest_mismatch' } });
    });
  });

  describe('start-up validation', () => {
    it('refuses a database without the migration, naming the missing tables and migration', async () => {
      const bare = await createFreshDatabase({ migrate: false });
      const bareSource = await createAgentRuntimeDataSource(bare.url).initialize();
      try {
        const error = await new PostgresAuditLog(bareSource).init().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RuntimePolicyError);
        expect((error as RuntimePolicyError).code).toBe('schema_mismatch');
        const mismatches = (error as RuntimePolicyError).details?.mismatches as Array<{ table: string | null; property: string; actual: string }>;
        expect(mismatches).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ table: 'agent_runtime_policy_audit_log', property: 'table', actual: 'missing' }),
            expect.objectContaining({ table: 'agent_runtime_policy_audit_head', property: 'table', actual: 'missing' }),
            expect.objectContaining({ property: 'migration:PolicyAuditLog1764400000000', actual: 'pending' }),
          ]),
        );
      } finally {
        await bareSource.destroy();
        await bare.drop();
      }
    });
  });
});

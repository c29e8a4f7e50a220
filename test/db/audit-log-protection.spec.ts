/**
 * The append-only protection of the policy audit log (spec 02 §9, defect 4.4): start-up refuses a
 * log or head whose triggers are missing, disabled or call a neutered function; the head moves
 * only by an append; verification does not vouch for a chain whose protection is off. Every test
 * runs on a fresh database of its own, since it breaks what the shared one relies on.
 */
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { validateSchema } from '../../src/database/schema/schema-validator';
import type { SchemaMismatch } from '../../src/database/schema/schema-comparison';
import { describeTriggerSpec, fingerprintFunction } from '../../src/database/schema/trigger-comparison';
import { AUDIT_HEAD_TABLE, AUDIT_LOG_TABLE } from '../../src/policy/audit-log/audit-log.constants';
import { AUDIT_HEAD_TABLE_SPEC, AUDIT_LOG_TABLE_SPEC, AUDIT_TABLE_SPECS, assertAuditLogSchema } from '../../src/policy/audit-log/audit-log.schema';
import { verifyAuditChain } from '../../src/policy/audit-log/audit-chain-verification';
import { PostgresAuditLog } from '../../src/policy/audit-log/postgres-audit-log';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { RuntimePolicyError } from '../../src/policy/runtime-policy.errors';
import { AUDIT_HEAD_GUARD_BODY } from '../../migrations/1764600000000-policy-audit-head-guard';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const policy = RuntimePolicy.compile({ id: 'protection-test', tools: { allow: ['search'] } });
const decisions = (n: number) => Array.from({ length: n }, (_, i) => policy.checkTool('search', { i }));

const [logNoChange, logNoTruncate] = AUDIT_LOG_TABLE_SPEC.triggers ?? [];
const [headAppendOnly, headNoTruncate] = AUDIT_HEAD_TABLE_SPEC.triggers ?? [];

let database: FreshDatabase;
let dataSource: DataSource;
let admin: Client;
let log: PostgresAuditLog;

beforeEach(async () => {
  database = await createFreshDatabase();
  dataSource = await createAgentRuntimeDataSource(database.url).initialize();
  admin = new Client({ connectionString: database.url });
  admin.on('error', () => {});
  await admin.connect();
  log = new PostgresAuditLog(dataSource);
});

afterEach(async () => {
  await admin.end().catch(() => {});
  await dataSource.destroy();
  await database.drop();
});

/** The mismatches `PostgresAuditLog.init` (what start-up runs) refuses the database with. */
async function startupMismatches(): Promise<SchemaMismatch[]> {
  const error = await log.init().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RuntimePolicyError);
  expect((error as RuntimePolicyError).code).toBe('schema_mismatch');
  return (error as RuntimePolicyError).details?.mismatches as unknown as SchemaMismatch[];
}

const sqlstateOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'succeeded',
    (error: { code?: unknown }) => error.code,
  );

describe('a migrated database', () => {
  it('validates, with both triggers of the log and both of the head present, enabled and unaltered', async () => {
    expect(await validateSchema(dataSource, AUDIT_TABLE_SPECS)).toEqual({ ok: true, mismatches: [] });
    await expect(assertAuditLogSchema(dataSource)).resolves.toBeUndefined();
    const { rows } = await admin.query(
      `SELECT tgname::text AS name, tgenabled::text AS enabled FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname`,
      [AUDIT_HEAD_TABLE],
    );
    expect(rows).toEqual([
      { name: headAppendOnly.name, enabled: 'O' },
      { name: headNoTruncate.name, enabled: 'O' },
    ]);
  });

  it("declares the head guard's fingerprint of the body the migration creates", () => {
    expect(headAppendOnly.functionFingerprint).toBe(fingerprintFunction('plpgsql', AUDIT_HEAD_GUARD_BODY));
  });
});

describe('start-up refuses an unprotected audit log, naming the trigger or function', () => {
  it('a dropped append-only trigger of the log', async () => {
    await admin.query(`DROP TRIGGER ${logNoChange.name} ON ${AUDIT_LOG_TABLE}`);
    expect(await startupMismatches()).toEqual([
      { table: AUDIT_LOG_TABLE, property: `trigger:${logNoChange.name}`, expected: describeTriggerSpec(logNoChange), actual: 'missing' },
    ]);
  });

  it('a disabled trigger (ALTER TABLE … DISABLE TRIGGER), and one enabled for replicas only', async () => {
    await admin.query(`ALTER TABLE ${AUDIT_LOG_TABLE} DISABLE TRIGGER ${logNoChange.name}`);
    await admin.query(`ALTER TABLE ${AUDIT_HEAD_TABLE} ENABLE REPLICA TRIGGER ${headAppendOnly.name}`);
    expect(await startupMismatches()).toEqual([
      { table: AUDIT_LOG_TABLE, property: `trigger:${logNoChange.name}`, expected: describeTriggerSpec(logNoChange), actual: 'disabled' },
      { table: AUDIT_HEAD_TABLE, property: `trigger:${headAppendOnly.name}`, expected: describeTriggerSpec(headAppendOnly), actual: 'enabled on replicas only' },
    ]);
  });

  it.each(['RETURN NULL', 'RETURN OLD'])('the append-only function replaced by a no-op (%s), by its fingerprint', async (noop) => {
    await admin.query(`CREATE OR REPLACE FUNCTION ${logNoChange.function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${noop}; END $$`);
    expect(await startupMismatches()).toEqual([
      {
        table: AUDIT_LOG_TABLE,
        property: `function:${logNoChange.function}`,
        expected: `fingerprint ${logNoChange.functionFingerprint}`,
        actual: `fingerprint ${fingerprintFunction('plpgsql', ` BEGIN ${noop}; END `)}`,
      },
    ]);
  });

  it('the head guard dropped, or its function replaced', async () => {
    await admin.query(`DROP TRIGGER ${headNoTruncate.name} ON ${AUDIT_HEAD_TABLE}`);
    await admin.query(`CREATE OR REPLACE FUNCTION ${headAppendOnly.function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`);
    expect((await startupMismatches()).map((m) => [m.table, m.property, m.actual])).toEqual([
      [AUDIT_HEAD_TABLE, `trigger:${headNoTruncate.name}`, 'missing'],
      [AUDIT_HEAD_TABLE, `function:${headAppendOnly.function}`, `fingerprint ${fingerprintFunction('plpgsql', ' BEGIN RETURN NEW; END ')}`],
    ]);
  });

  it('a trigger re-created to call another function, and an extra trigger that could rewrite rows', async () => {
    await admin.query(`CREATE FUNCTION audit_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);
    await admin.query(`DROP TRIGGER ${logNoTruncate.name} ON ${AUDIT_LOG_TABLE}`);
    await admin.query(`CREATE TRIGGER ${logNoTruncate.name} BEFORE TRUNCATE ON ${AUDIT_LOG_TABLE} FOR EACH STATEMENT EXECUTE FUNCTION audit_noop()`);
    await admin.query(`CREATE TRIGGER audit_rewrite BEFORE INSERT ON ${AUDIT_LOG_TABLE} FOR EACH ROW EXECUTE FUNCTION audit_noop()`);
    expect(await startupMismatches()).toEqual([
      { table: AUDIT_LOG_TABLE, property: `trigger:${logNoTruncate.name}`, expected: describeTriggerSpec(logNoTruncate), actual: 'before truncate for each statement execute audit_noop()' },
      { table: AUDIT_LOG_TABLE, property: 'trigger:audit_rewrite', expected: 'absent', actual: 'before insert for each row execute audit_noop()' },
    ]);
  });
});

describe('the head moves only by an append', () => {
  beforeEach(async () => {
    await log.init();
    for (const decision of decisions(3)) await log.record(decision);
  });

  it('appends still move it, concurrently too, and the chain verifies', async () => {
    await Promise.all(decisions(20).map((decision) => log.record(decision)));
    expect(await log.verifyChain()).toMatchObject({ ok: true, rows_checked: 23, head_seq: 23 });
  });

  it('refuses DELETE, TRUNCATE, INSERT and every UPDATE that is not an append, in the database', async () => {
    const [row2] = (await admin.query(`SELECT row_hash FROM ${AUDIT_LOG_TABLE} WHERE seq = 2`)).rows;
    const [row3] = (await admin.query(`SELECT prev_hash, row_hash FROM ${AUDIT_LOG_TABLE} WHERE seq = 3`)).rows;
    for (const sql of [
      `DELETE FROM ${AUDIT_HEAD_TABLE}`,
      `TRUNCATE ${AUDIT_HEAD_TABLE}`,
      `INSERT INTO ${AUDIT_HEAD_TABLE} (id, last_seq, last_hash) VALUES (2, 0, repeat('0', 64))`,
      // back to an earlier row: the tail-cut rewrite
      `UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = 2, last_hash = '${row2.row_hash}'`,
      // one ahead, but no log row of that seq
      `UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = 4, last_hash = repeat('a', 64)`,
      // the hash of a different row
      `UPDATE ${AUDIT_HEAD_TABLE} SET last_hash = '${row2.row_hash}'`,
      `UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = last_seq`,
    ]) {
      expect([sql, await sqlstateOf(admin.query(sql))]).toEqual([sql, '42501']);
    }
    // a row of the next seq exists but does not chain to the head: moving there is refused
    await admin.query(
      `INSERT INTO ${AUDIT_LOG_TABLE} (seq, decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason, policy_fingerprint, decision_json, prev_hash, row_hash)
       VALUES (4, 'forged', 0, 'p', 'tool_call', 's', 'allow', 'allowed', repeat('0', 64), '{}', repeat('b', 64), repeat('c', 64))`,
    );
    expect(await sqlstateOf(admin.query(`UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = 4, last_hash = repeat('c', 64)`))).toBe('42501');
    const { rows } = await admin.query(`SELECT last_seq::int AS last_seq, last_hash FROM ${AUDIT_HEAD_TABLE}`);
    expect(rows).toEqual([{ last_seq: 3, last_hash: row3.row_hash }]);
  });
});

describe('verification of a chain whose tail was cut and head moved back by a superuser', () => {
  beforeEach(async () => {
    await log.init();
    for (const decision of decisions(5)) await log.record(decision);
  });

  async function cutTailTo(seq: number, how: 'DROP' | 'DISABLE'): Promise<void> {
    for (const [table, triggers] of [
      [AUDIT_LOG_TABLE, AUDIT_LOG_TABLE_SPEC.triggers ?? []],
      [AUDIT_HEAD_TABLE, AUDIT_HEAD_TABLE_SPEC.triggers ?? []],
    ] as const) {
      for (const trigger of triggers) {
        await admin.query(how === 'DROP' ? `DROP TRIGGER ${trigger.name} ON ${table}` : `ALTER TABLE ${table} DISABLE TRIGGER ${trigger.name}`);
      }
    }
    await admin.query(`DELETE FROM ${AUDIT_LOG_TABLE} WHERE seq > $1`, [seq]);
    await admin.query(`UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = $1, last_hash = coalesce((SELECT row_hash FROM ${AUDIT_LOG_TABLE} WHERE seq = $1), repeat('0', 64))`, [seq]);
  }

  it.each([['dropped', 'DROP'], ['disabled', 'DISABLE']] as const)('is not intact when the triggers were %s', async (_what, how) => {
    await cutTailTo(3, how);
    const report = await verifyAuditChain(dataSource);
    expect(report).toMatchObject({ ok: false, rows_checked: 3, head_seq: 3, first_broken: { seq: 3, reason: 'chain_unprotected' } });
  });

  it('is not intact when the whole log was emptied and the head reset to genesis', async () => {
    await cutTailTo(0, 'DROP');
    expect(await verifyAuditChain(dataSource)).toMatchObject({ ok: false, rows_checked: 0, head_seq: 0, first_broken: { seq: 0, reason: 'chain_unprotected' } });
  });
});

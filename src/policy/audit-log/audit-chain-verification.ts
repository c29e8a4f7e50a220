import type { DataSource } from 'typeorm';
import { systemClock, type Clock } from '../../shared/time/clock';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { sha256Hex } from '../../shared/text/sha256';
import { canonicalJson } from '../../json';
import { readSchemaCatalog } from '../../database/schema/schema-catalog';
import { compareTriggers } from '../../database/schema/trigger-comparison';
import { verifyDecisionDigest } from '../policy-decision';
import { AUDIT_HEAD_TABLE, AUDIT_LOG_TABLE, GENESIS_HASH } from './audit-log.constants';
import { AUDIT_TABLE_SPECS } from './audit-log.schema';

/** Why verification stopped at a row (spec 02 §9), in the order the checks run. */
export type AuditChainBreak =
  | 'sequence_gap'
  | 'prev_hash_mismatch'
  | 'row_hash_mismatch'
  | 'non_canonical_decision'
  | 'decision_digest_mismatch'
  | 'column_mismatch'
  | 'head_mismatch'
  | 'chain_unprotected';

/** Frozen verification report; it never holds decision content. */
export interface AuditChainReport {
  readonly schema_version: 1;
  readonly ok: boolean;
  readonly rows_checked: number;
  readonly head_seq: number;
  readonly head_hash: string;
  readonly first_broken: Readonly<{ seq: number; reason: AuditChainBreak }> | null;
  readonly verified_at_ms: number;
}

/** Options of {@link verifyAuditChain}. */
export interface VerifyAuditChainOptions {
  /** Rows read per page (keyset paging bounds memory). @default 1000 */
  batchSize?: number;
  /** Clock of `verified_at_ms`. @default the system clock */
  clock?: Clock;
}

interface AuditRow {
  seq: string;
  decision_id: string;
  decided_at_ms: string;
  policy_id: string;
  operation: string;
  subject: string;
  outcome: string;
  reason: string;
  policy_fingerprint: string;
  decision_json: string;
  prev_hash: string;
  row_hash: string;
}

const COPIED_COLUMNS = ['decision_id', 'policy_id', 'operation', 'subject', 'outcome', 'reason', 'policy_fingerprint'] as const;

/**
 * Reads the audit log in `seq` order inside one read-only REPEATABLE READ transaction and stops at
 * the first broken row; then checks the head against the last row. A chain whose protection is off
 * (an append-only trigger of the log or the head missing, disabled or calling a function that is
 * not the migration's) is not vouched for: `chain_unprotected` at the head's `last_seq`, since with
 * the head guard gone the tail may have been cut and the head moved back without a trace.
 */
export async function verifyAuditChain(dataSource: DataSource, options: VerifyAuditChainOptions = {}): Promise<AuditChainReport> {
  const batchSize = options.batchSize ?? 1000;
  if (!isSafeIntegerAtLeast(batchSize, 1)) throw new RangeError('batchSize must be a positive safe integer');
  const clock = options.clock ?? systemClock;
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    let expectedSeq = 1;
    let previousHash = GENESIS_HASH;
    let rowsChecked = 0;
    let broken: { seq: number; reason: AuditChainBreak } | null = null;
    pages: for (;;) {
      const rows = (await runner.query(
        `SELECT seq, decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason, policy_fingerprint,
                decision_json, prev_hash, row_hash
           FROM ${AUDIT_LOG_TABLE} WHERE seq >= $1 ORDER BY seq LIMIT $2`,
        [expectedSeq, batchSize],
      )) as AuditRow[];
      for (const row of rows) {
        const reason = checkRow(row, expectedSeq, previousHash);
        if (reason) {
          broken = { seq: Number(row.seq), reason };
          break pages;
        }
        rowsChecked++;
        expectedSeq++;
        previousHash = row.row_hash;
      }
      if (rows.length < batchSize) break;
    }
    const [head] = (await runner.query(`SELECT last_seq, last_hash FROM ${AUDIT_HEAD_TABLE} WHERE id = 1`)) as Array<{
      last_seq: string;
      last_hash: string;
    }>;
    const headSeq = head ? Number(head.last_seq) : 0;
    const headHash = head?.last_hash ?? GENESIS_HASH;
    if (!broken && (headSeq !== expectedSeq - 1 || headHash !== previousHash)) broken = { seq: headSeq, reason: 'head_mismatch' };
    if (!broken && !(await isProtected((sql, parameters) => runner.query(sql, parameters ? [...parameters] : undefined)))) {
      broken = { seq: headSeq, reason: 'chain_unprotected' };
    }
    await runner.query('COMMIT');
    return Object.freeze({
      schema_version: 1 as const,
      ok: broken === null,
      rows_checked: rowsChecked,
      head_seq: headSeq,
      head_hash: headHash,
      first_broken: broken ? Object.freeze(broken) : null,
      verified_at_ms: clock.wallNow(),
    });
  } catch (error) {
    await runner.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}

/** Whether every trigger the audit table specs declare is present, enabled and calls its unaltered function. */
async function isProtected(query: Parameters<typeof readSchemaCatalog>[0]): Promise<boolean> {
  const snapshot = await readSchemaCatalog(query, {
    schema: null,
    tableNames: AUDIT_TABLE_SPECS.map((spec) => spec.name),
    functionNames: AUDIT_TABLE_SPECS.flatMap((spec) => (spec.triggers ?? []).map((trigger) => trigger.function)),
    migrationsTable: null,
  });
  return AUDIT_TABLE_SPECS.every((spec) => {
    const table = snapshot.tables.get(spec.name);
    return table !== undefined && compareTriggers(spec.triggers ?? [], table.triggers, snapshot.functions, snapshot.schema).length === 0;
  });
}

function checkRow(row: AuditRow, expectedSeq: number, previousHash: string): AuditChainBreak | null {
  if (Number(row.seq) !== expectedSeq) return 'sequence_gap';
  if (row.prev_hash !== previousHash) return 'prev_hash_mismatch';
  if (sha256Hex(row.prev_hash + row.decision_json) !== row.row_hash) return 'row_hash_mismatch';
  let decision: unknown;
  try {
    decision = JSON.parse(row.decision_json);
    if (canonicalJson(decision) !== row.decision_json) return 'non_canonical_decision';
  } catch {
    return 'non_canonical_decision';
  }
  // a record of any decision schema (1 before `subject_digest`, 2 since) whose digest holds
  if (!verifyDecisionDigest(decision)) return 'decision_digest_mismatch';
  const record = decision as unknown as Record<string, unknown>;
  if (COPIED_COLUMNS.some((column) => record[column] !== row[column])) return 'column_mismatch';
  if (String(record.decided_at_ms) !== row.decided_at_ms) return 'column_mismatch';
  return null;
}

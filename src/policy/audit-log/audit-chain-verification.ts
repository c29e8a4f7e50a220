import type { DataSource } from 'typeorm';
import { systemClock, type Clock } from '../shared/clock';
import { isSafeIntegerAtLeast } from '../shared/plain-object';
import { sha256Hex } from '../shared/sha256';
import { canonicalJson } from '../json';
import { isPolicyDecision, verifyDecisionDigest } from './policy-decision';

/** Why verification stopped at a row (spec 02 §9), in the order the checks run. */
export type AuditChainBreak =
  | 'sequence_gap'
  | 'prev_hash_mismatch'
  | 'row_hash_mismatch'
  | 'non_canonical_decision'
  | 'decision_digest_mismatch'
  | 'column_mismatch'
  | 'head_mismatch';

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

const GENESIS = '0'.repeat(64);
const COPIED_COLUMNS = ['decision_id', 'policy_id', 'operation', 'subject', 'outcome', 'reason', 'policy_fingerprint'] as const;

/**
 * Reads the audit log in `seq` order inside one read-only REPEATABLE READ transaction and stops at
 * the first broken row; then checks the head against the last row.
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
    let previousHash = GENESIS;
    let rowsChecked = 0;
    let broken: { seq: number; reason: AuditChainBreak } | null = null;
    pages: for (;;) {
      const rows = (await runner.query(
        `SELECT seq, decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason, policy_fingerprint,
                decision_json, prev_hash, row_hash
           FROM agent_runtime_policy_audit_log WHERE seq >= $1 ORDER BY seq LIMIT $2`,
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
    const [head] = (await runner.query('SELECT last_seq, last_hash FROM agent_runtime_policy_audit_head WHERE id = 1')) as Array<{
      last_seq: string;
      last_hash: string;
    }>;
    const headSeq = head ? Number(head.last_seq) : 0;
    const headHash = head?.last_hash ?? GENESIS;
    if (!broken && (headSeq !== expectedSeq - 1 || headHash !== previousHash)) broken = { seq: headSeq, reason: 'head_mismatch' };
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
  if (!isPolicyDecision(decision) || !verifyDecisionDigest(decision)) return 'decision_digest_mismatch';
  const record = decision as unknown as Record<string, unknown>;
  if (COPIED_COLUMNS.some((column) => record[column] !== row[column])) return 'column_mismatch';
  if (String(record.decided_at_ms) !== row.decided_at_ms) return 'column_mismatch';
  return null;
}

import type { DataSource } from 'typeorm';
import { systemClock, type Clock } from '../../shared/time/clock';
import { classifyFailure } from '../../database/postgres-failure';
import type { AuditSink } from './audit-sink';
import { canonicalJson } from '../../json';
import { isPolicyDecision, verifyDecisionDigest, type PolicyDecision } from '../policy-decision';
import { RuntimePolicyError } from '../runtime-policy.errors';
import { assertAuditLogSchema } from './audit-log.schema';
import { verifyAuditChain, type AuditChainReport, type VerifyAuditChainOptions } from './audit-chain-verification';
import type { AuditChainVerifier } from './audit-chain-verifier';
import { AUDIT_HEAD_TABLE, AUDIT_LOG_TABLE } from './audit-log.constants';

/**
 * One append in one statement (one round trip, one short transaction): lock the head row, which
 * serialises appends across connections and instances so the chain never forks; insert the row
 * chained to the head, its hash computed by Postgres exactly as `sha256Hex(prev_hash + json)`;
 * move the head. A `decision_id` already stored inserts nothing and reports the stored JSON.
 */
const APPEND = `
  WITH head AS (
    SELECT last_seq, last_hash FROM ${AUDIT_HEAD_TABLE} WHERE id = 1 FOR UPDATE
  ), existing AS (
    SELECT decision_json FROM ${AUDIT_LOG_TABLE} WHERE decision_id = $1
  ), inserted AS (
    INSERT INTO ${AUDIT_LOG_TABLE} (seq, decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason,
                                    policy_fingerprint, decision_json, prev_hash, row_hash)
    SELECT head.last_seq + 1, $1, $2, $3, $4, $5, $6, $7, $8, $9, head.last_hash,
           encode(sha256(convert_to(head.last_hash || $9::text, 'UTF8')), 'hex')
      FROM head
     WHERE NOT EXISTS (SELECT 1 FROM existing)
    ON CONFLICT (decision_id) DO NOTHING
    RETURNING seq, row_hash
  ), moved AS (
    UPDATE ${AUDIT_HEAD_TABLE} AS h SET last_seq = inserted.seq, last_hash = inserted.row_hash
      FROM inserted WHERE h.id = 1
    RETURNING h.id
  )
  SELECT (SELECT seq FROM inserted)::text AS seq, (SELECT decision_json FROM existing) AS existing_json`;

/** Collaborators of a {@link PostgresAuditLog}. */
export interface PostgresAuditLogDeps {
  /** Clock of `verified_at_ms` in verification reports. @default the system clock */
  clock?: Clock;
}

/**
 * The append-only, hash-chained policy audit log on Postgres (spec 02 §9). Appends are serialised
 * by a row lock on the one-row head table, so concurrent writers on any number of connections and
 * app instances extend one chain that never forks. `init()` validates the schema; nothing here
 * ever creates or alters a table.
 */
export class PostgresAuditLog implements AuditSink, AuditChainVerifier {
  private readonly clock: Clock;

  /** @param dataSource the DataSource the log is on (the console reads recent denials through it) */
  constructor(
    readonly dataSource: DataSource,
    deps: PostgresAuditLogDeps = {},
  ) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Validates the tables and the migration; throws `schema_mismatch` listing every difference. */
  async init(): Promise<void> {
    await assertAuditLogSchema(this.dataSource);
  }

  /**
   * Stores `decision` at the head of the chain; resolves once it is committed. Recording the same
   * decision again is a no-op; a different decision under a stored `decision_id` is refused.
   */
  async record(decision: PolicyDecision): Promise<void> {
    if (!isPolicyDecision(decision) || !verifyDecisionDigest(decision)) throw new RuntimePolicyError('invalid_runtime_policy_audit_event');
    const decisionJson = canonicalJson(decision);
    let stored: string | null;
    try {
      const [row] = (await this.dataSource.query(APPEND, [
        decision.decision_id,
        decision.decided_at_ms,
        decision.policy_id,
        decision.operation,
        decision.subject,
        decision.outcome,
        decision.reason,
        decision.policy_fingerprint,
        decisionJson,
      ])) as Array<{ seq: string | null; existing_json: string | null }>;
      if (row.seq !== null) return;
      // not appended: the id is stored already, possibly by a writer that committed while this one
      // waited for the head lock (its row is newer than this statement's snapshot), so look again
      stored = row.existing_json ?? (await this.storedDecisionJson(decision.decision_id));
    } catch (error) {
      throw persistenceFailed(error);
    }
    if (stored === null) throw new RuntimePolicyError('runtime_policy_audit_persistence_failed');
    if (stored !== decisionJson) throw new RuntimePolicyError('invalid_runtime_policy_audit_event');
  }

  private async storedDecisionJson(decisionId: string): Promise<string | null> {
    const [row] = (await this.dataSource.query(`SELECT decision_json FROM ${AUDIT_LOG_TABLE} WHERE decision_id = $1`, [decisionId])) as Array<{
      decision_json: string;
    }>;
    return row?.decision_json ?? null;
  }

  /**
   * Verifies the whole chain; see {@link verifyAuditChain}. A database that cannot be read (down,
   * the connection lost mid-read) rejects with `runtime_policy_audit_log_unavailable` (503) and its
   * codes only; a bad `batchSize` still throws its `RangeError`.
   */
  async verifyChain(options?: VerifyAuditChainOptions): Promise<AuditChainReport> {
    try {
      return await verifyAuditChain(this.dataSource, { clock: this.clock, ...options });
    } catch (error) {
      if (error instanceof RangeError) throw error;
      const { codes } = classifyFailure(error);
      const known = codes.sqlstate !== null || codes.socket_error !== null;
      throw new RuntimePolicyError('runtime_policy_audit_log_unavailable', known ? { ...codes } : undefined);
    }
  }

  /** {@link verifyChain} with the default options: the {@link AuditChainVerifier} of this log. */
  verify(): Promise<AuditChainReport> {
    return this.verifyChain();
  }
}

/** `runtime_policy_audit_persistence_failed`, keeping only the codes of a database error (SQLSTATE, socket code). */
export function persistenceFailed(error: unknown): RuntimePolicyError {
  const { codes } = classifyFailure(error);
  const known = codes.sqlstate !== null || codes.socket_error !== null;
  return new RuntimePolicyError('runtime_policy_audit_persistence_failed', known ? { ...codes } : undefined);
}

import type { DataSource, QueryRunner } from 'typeorm';
import { systemClock, type Clock } from '../shared/clock';
import { sha256Hex } from '../shared/sha256';
import type { AuditSink } from './audit-sink';
import { canonicalJson } from './canonical-json';
import { isPolicyDecision, verifyDecisionDigest, type PolicyDecision } from './policy-decision';
import { RuntimePolicyError } from './runtime-policy.errors';
import { assertAuditLogSchema } from './audit-log.schema';
import { verifyAuditChain, type AuditChainReport, type VerifyAuditChainOptions } from './audit-chain';

export const AUDIT_LOG_TABLE = 'agent_runtime_policy_audit_log';
export const AUDIT_HEAD_TABLE = 'agent_runtime_policy_audit_head';
/** `prev_hash` of the first row and `last_hash` of an empty log. */
export const GENESIS_HASH = '0'.repeat(64);

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
export class PostgresAuditLog implements AuditSink {
  private readonly clock: Clock;

  constructor(
    private readonly dataSource: DataSource,
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
    let runner: QueryRunner | undefined;
    try {
      runner = this.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction('READ COMMITTED');
      const [head] = (await runner.query(`SELECT last_seq, last_hash FROM ${AUDIT_HEAD_TABLE} WHERE id = 1 FOR UPDATE`)) as Array<{
        last_seq: string;
        last_hash: string;
      }>;
      if (!head) throw new RuntimePolicyError('runtime_policy_audit_persistence_failed');
      const [stored] = (await runner.query(`SELECT decision_json FROM ${AUDIT_LOG_TABLE} WHERE decision_id = $1`, [decision.decision_id])) as Array<{
        decision_json: string;
      }>;
      if (stored) {
        await runner.commitTransaction();
        if (stored.decision_json !== decisionJson) throw new RuntimePolicyError('invalid_runtime_policy_audit_event');
        return;
      }
      const seq = (BigInt(head.last_seq) + 1n).toString();
      const rowHash = sha256Hex(head.last_hash + decisionJson);
      await runner.query(
        `INSERT INTO ${AUDIT_LOG_TABLE} (seq, decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason,
           policy_fingerprint, decision_json, prev_hash, row_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          seq,
          decision.decision_id,
          decision.decided_at_ms,
          decision.policy_id,
          decision.operation,
          decision.subject,
          decision.outcome,
          decision.reason,
          decision.policy_fingerprint,
          decisionJson,
          head.last_hash,
          rowHash,
        ],
      );
      await runner.query(`UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = $1, last_hash = $2 WHERE id = 1`, [seq, rowHash]);
      await runner.commitTransaction();
    } catch (error) {
      if (runner?.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      if (RuntimePolicyError.isRuntimePolicyError(error)) throw error;
      throw persistenceFailed(error);
    } finally {
      await runner?.release().catch(() => undefined);
    }
  }

  /** Verifies the whole chain; see {@link verifyAuditChain}. */
  verifyChain(options?: VerifyAuditChainOptions): Promise<AuditChainReport> {
    return verifyAuditChain(this.dataSource, { clock: this.clock, ...options });
  }
}

/** `runtime_policy_audit_persistence_failed`, keeping only the SQLSTATE of a database error. */
export function persistenceFailed(error: unknown): RuntimePolicyError {
  const code = (error as { code?: unknown } | null)?.code;
  const sqlstate = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  return new RuntimePolicyError('runtime_policy_audit_persistence_failed', sqlstate ? { sqlstate } : undefined);
}

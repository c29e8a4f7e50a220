import type { DataSource } from 'typeorm';
import { AUDIT_LOG_TABLE } from '../../policy/audit-log/audit-log.constants';
import type { ConsoleDenial, ConsoleDenials } from './console-snapshot.types';

/**
 * The copied, content-free columns of the newest denials, and the decision's `subject_digest` (absent
 * from records of schema 1, so `null` there); `seq` is the chain order.
 */
const RECENT_DENIALS = `SELECT decision_id, decided_at_ms::text AS decided_at_ms, operation, subject,
       decision_json::jsonb ->> 'subject_digest' AS subject_digest, outcome, reason
  FROM ${AUDIT_LOG_TABLE} WHERE outcome = 'deny' ORDER BY seq DESC LIMIT $1`;

interface DenialRow {
  decision_id: string;
  decided_at_ms: string;
  operation: string;
  subject: string;
  subject_digest: string | null;
  outcome: string;
  reason: string;
}

/**
 * The newest `limit` denials of the Postgres audit log, newest first. A failed read is
 * `{status: 'unavailable'}` without the database's error text: the console keeps serving.
 */
export async function recentDenials(dataSource: DataSource, limit: number): Promise<ConsoleDenials> {
  try {
    const rows = (await dataSource.query(RECENT_DENIALS, [limit])) as DenialRow[];
    const items: ConsoleDenial[] = rows.map((row) =>
      Object.freeze({
        decision_id: row.decision_id,
        decided_at_ms: Number(row.decided_at_ms),
        operation: row.operation,
        subject: row.subject,
        subject_digest: row.subject_digest,
        outcome: row.outcome,
        reason: row.reason,
      }),
    );
    return Object.freeze({ status: 'ok' as const, items: Object.freeze(items) });
  } catch {
    return Object.freeze({ status: 'unavailable' as const });
  }
}

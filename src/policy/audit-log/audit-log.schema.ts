import type { DataSource } from 'typeorm';
import { assertSchema, type SchemaValidationOptions } from '../database/schema-validator';
import type { TableSpec } from '../database/table-spec';
import { RuntimePolicyError } from './runtime-policy.errors';

const hash = { type: 'character(64)', nullable: false } as const;
const text = { type: 'text', nullable: false } as const;

/** The shape `PostgresAuditLog` needs of the log table (migration `PolicyAuditLog1764400000000`). */
export const AUDIT_LOG_TABLE_SPEC: TableSpec = Object.freeze({
  name: 'agent_runtime_policy_audit_log',
  columns: [
    { name: 'seq', type: 'bigint', nullable: false },
    { name: 'decision_id', ...text },
    { name: 'decided_at_ms', type: 'bigint', nullable: false },
    { name: 'policy_id', ...text },
    { name: 'operation', ...text },
    { name: 'subject', ...text },
    { name: 'outcome', ...text },
    { name: 'reason', ...text },
    { name: 'policy_fingerprint', ...hash },
    { name: 'decision_json', ...text },
    { name: 'prev_hash', ...hash },
    { name: 'row_hash', ...hash },
    { name: 'appended_at', type: 'timestamp with time zone', nullable: false, default: 'now()' },
  ],
  primaryKey: ['seq'],
  uniques: [
    { name: 'agent_runtime_policy_audit_log_decision_id_key', columns: ['decision_id'] },
    { name: 'agent_runtime_policy_audit_log_row_hash_key', columns: ['row_hash'] },
  ],
  indexes: [{ name: 'agent_runtime_policy_audit_log_decided_at_ms_idx', columns: ['decided_at_ms'], unique: false, method: 'btree' }],
});

/** The one-row chain head. */
export const AUDIT_HEAD_TABLE_SPEC: TableSpec = Object.freeze({
  name: 'agent_runtime_policy_audit_head',
  columns: [
    { name: 'id', type: 'smallint', nullable: false },
    { name: 'last_seq', type: 'bigint', nullable: false },
    { name: 'last_hash', ...hash },
  ],
  primaryKey: ['id'],
  checks: [{ name: 'agent_runtime_policy_audit_head_single_row', expression: '(id = 1)' }],
});

/** Validates both audit tables and the applied migrations; throws `schema_mismatch` with every difference. */
export async function assertAuditLogSchema(dataSource: DataSource, options: SchemaValidationOptions = {}): Promise<void> {
  await assertSchema(dataSource, [AUDIT_LOG_TABLE_SPEC, AUDIT_HEAD_TABLE_SPEC], options, (mismatches) => new RuntimePolicyError('schema_mismatch', { mismatches }));
}

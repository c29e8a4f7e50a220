import type { DataSource } from 'typeorm';
import { assertSchema, type SchemaValidationOptions } from '../../database/schema/schema-validator';
import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';
import { RuntimePolicyError } from '../runtime-policy.errors';
import { AUDIT_HEAD_TABLE, AUDIT_LOG_TABLE } from './audit-log.constants';

const hash = { type: 'character(64)', nullable: false } as const;
const text = { type: 'text', nullable: false } as const;

/** `agent_runtime_policy_audit_log_append_only()`: raises on every change (migration `PolicyAuditLog1764400000000`). */
const LOG_APPEND_ONLY = {
  function: 'agent_runtime_policy_audit_log_append_only',
  functionFingerprint: '9807c8fb2b500817835a24e0833cb43ff87644fe91ceb508b759a90f0f53a41d',
} as const;

/** `agent_runtime_policy_audit_head_guard()`: lets only an append move the head (migration `PolicyAuditHeadGuard1764600000000`). */
const HEAD_GUARD = {
  function: 'agent_runtime_policy_audit_head_guard',
  functionFingerprint: '3eb329153e9089f46599005d01d826f96640f13e66d1065302192cdaad29f567',
} as const;

/** The shape `PostgresAuditLog` needs of the log table, its append-only triggers included. */
export const AUDIT_LOG_TABLE_SPEC: TableSpec = defineTableSpec({
  name: AUDIT_LOG_TABLE,
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
    { name: `${AUDIT_LOG_TABLE}_decision_id_key`, columns: ['decision_id'] },
    { name: `${AUDIT_LOG_TABLE}_row_hash_key`, columns: ['row_hash'] },
  ],
  indexes: [{ name: `${AUDIT_LOG_TABLE}_decided_at_ms_idx`, columns: ['decided_at_ms'], unique: false, method: 'btree' }],
  triggers: [
    { name: `${AUDIT_LOG_TABLE}_no_change`, timing: 'before', events: ['update', 'delete'], level: 'row', ...LOG_APPEND_ONLY },
    { name: `${AUDIT_LOG_TABLE}_no_truncate`, timing: 'before', events: ['truncate'], level: 'statement', ...LOG_APPEND_ONLY },
  ],
});

/** The one-row chain head, with the triggers that let only an append move it. */
export const AUDIT_HEAD_TABLE_SPEC: TableSpec = defineTableSpec({
  name: AUDIT_HEAD_TABLE,
  columns: [
    { name: 'id', type: 'smallint', nullable: false },
    { name: 'last_seq', type: 'bigint', nullable: false },
    { name: 'last_hash', ...hash },
  ],
  primaryKey: ['id'],
  checks: [{ name: `${AUDIT_HEAD_TABLE}_single_row`, expression: '(id = 1)' }],
  triggers: [
    { name: `${AUDIT_HEAD_TABLE}_append_only`, timing: 'before', events: ['insert', 'update', 'delete'], level: 'row', ...HEAD_GUARD },
    { name: `${AUDIT_HEAD_TABLE}_no_truncate`, timing: 'before', events: ['truncate'], level: 'statement', ...HEAD_GUARD },
  ],
});

/** Both audit tables, in report order. */
export const AUDIT_TABLE_SPECS: readonly TableSpec[] = Object.freeze([AUDIT_LOG_TABLE_SPEC, AUDIT_HEAD_TABLE_SPEC]);

/**
 * Validates both audit tables, their triggers and trigger functions, and the applied migrations
 * (spec 04 §1); throws `RuntimePolicyError` `schema_mismatch` listing every difference.
 *
 * @example
 * await assertAuditLogSchema(dataSource); // before serving with a PostgresAuditLog
 */
export async function assertAuditLogSchema(dataSource: DataSource, options: SchemaValidationOptions = {}): Promise<void> {
  await assertSchema(dataSource, AUDIT_TABLE_SPECS, options, (mismatches) => new RuntimePolicyError('schema_mismatch', { mismatches }));
}

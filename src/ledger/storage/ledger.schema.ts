import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** Default name of the ledger table (option `tableName`). */
export const DEFAULT_LEDGER_TABLE = 'agent_runtime_invocations';

/**
 * Table names the ledger accepts: a Postgres identifier short enough that every derived constraint
 * and index name (`<table>_owner_instance_idx`, 19 more characters) stays within 63 characters.
 */
export const LEDGER_TABLE_NAME = /^[a-z_][a-z0-9_]{0,43}$/;

/** True when `name` can be a ledger table name (`^[a-z_][a-z0-9_]{0,43}$`). */
export function isLedgerTableName(name: unknown): name is string {
  return typeof name === 'string' && LEDGER_TABLE_NAME.test(name);
}

const bigintZero = { type: 'bigint', nullable: false, default: '0' } as const;
const requiredText = { type: 'text', nullable: false } as const;

/**
 * The shape the ledger needs of its table (spec 04 §2), as the validator compares it with the
 * catalog; constraint and index names derive from `tableName`.
 */
export function ledgerTableSpec(tableName: string = DEFAULT_LEDGER_TABLE): TableSpec {
  if (!isLedgerTableName(tableName)) throw new TypeError('tableName must match ^[a-z_][a-z0-9_]{0,43}$');
  return defineTableSpec({
    name: tableName,
    columns: [
      { name: 'id', ...requiredText },
      { name: 'format', type: 'integer', nullable: false, default: '1' },
      { name: 'workflow_id', ...requiredText },
      { name: 'workflow_version', ...requiredText },
      { name: 'kind', ...requiredText },
      { name: 'checkpoint', type: 'jsonb', nullable: false },
      { name: 'phase', type: 'text', nullable: false, default: "'ready'::text" },
      { name: 'outcome', type: 'jsonb', nullable: true },
      { name: 'owner_token', type: 'uuid', nullable: true },
      { name: 'owner_instance', type: 'text', nullable: true },
      { name: 'lease_until_ms', ...bigintZero },
      { name: 'revision', ...bigintZero },
      { name: 'created_at_ms', type: 'bigint', nullable: false },
      { name: 'updated_at_ms', type: 'bigint', nullable: false },
    ],
    primaryKey: ['id'],
    indexes: [
      { name: `${tableName}_running_lease_idx`, columns: ['lease_until_ms'], unique: false, method: 'btree', predicate: "phase = 'running'::text" },
      { name: `${tableName}_owner_instance_idx`, columns: ['owner_instance'], unique: false, method: 'btree', predicate: 'owner_instance IS NOT NULL' },
    ],
    checks: [
      { name: `${tableName}_format_check`, expression: 'format = 1' },
      {
        name: `${tableName}_phase_check`,
        expression:
          "phase = ANY (ARRAY['ready'::text, 'running'::text, 'paused'::text, 'completed'::text, 'failed'::text, 'timed_out'::text, 'cancelled'::text])",
      },
      {
        name: `${tableName}_owner_check`,
        expression:
          "((phase = 'running'::text) = (owner_token IS NOT NULL)) AND ((owner_token IS NULL) = (owner_instance IS NULL)) AND ((phase = 'running'::text) OR (lease_until_ms = 0))",
      },
      { name: `${tableName}_counters_check`, expression: '(lease_until_ms >= 0) AND (revision >= 0)' },
    ],
  });
}

/** The `TableSpec` of the default table `agent_runtime_invocations`. */
export const LEDGER_TABLE_SPEC: TableSpec = ledgerTableSpec();

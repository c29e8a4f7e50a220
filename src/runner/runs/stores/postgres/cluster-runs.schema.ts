import { defineTableSpec, type TableSpec } from '../../../../database/schema/table-spec';

/** The runs table of `PostgresRunStore` (spec 08 §4). */
export const RUNS_TABLE = 'agent_runtime_runs';

/** The stream items table of `PostgresRunStore` (spec 08 §4). */
export const RUN_ITEMS_TABLE = 'agent_runtime_run_items';

const requiredText = { type: 'text', nullable: false, collation: 'C' } as const;
const optionalText = { type: 'text', nullable: true, collation: 'C' } as const;
const requiredBigint = { type: 'bigint', nullable: false } as const;
const UNFINISHED = "ARRAY['pending'::text, 'running'::text, 'paused'::text]";
const FINISHED = "ARRAY['completed'::text, 'failed'::text, 'cancelled'::text, 'timed_out'::text]";
const STATUSES = "ARRAY['pending'::text, 'running'::text, 'paused'::text, 'completed'::text, 'failed'::text, 'cancelled'::text, 'timed_out'::text]";

/** What the store needs of `agent_runtime_runs`, as migration 1765000000002 creates it and 1765100000000 adds `owner_principal` to. */
export const RUNS_TABLE_SPEC: TableSpec = defineTableSpec({
  name: RUNS_TABLE,
  columns: [
    { name: 'run_id', ...requiredText },
    { name: 'agent', ...requiredText },
    { name: 'user_id', ...requiredText },
    { name: 'session_id', ...requiredText },
    { name: 'invocation_id', ...optionalText },
    { name: 'status', ...requiredText },
    { name: 'pending_call_ids', type: 'jsonb', nullable: false, default: "'[]'::jsonb" },
    { name: 'error', type: 'jsonb', nullable: true },
    { name: 'owner_instance', ...optionalText },
    { name: 'durable', type: 'boolean', nullable: false },
    { name: 'created_at_ms', ...requiredBigint },
    { name: 'updated_at_ms', ...requiredBigint },
    { name: 'last_item_seq', type: 'integer', nullable: false, default: '0' },
    { name: 'oldest_item_seq', type: 'integer', nullable: false, default: '1' },
    { name: 'owner_principal', ...optionalText },
  ],
  primaryKey: ['run_id'],
  indexes: [
    { name: `${RUNS_TABLE}_active_idx`, columns: ['owner_instance'], unique: false, method: 'btree', predicate: `status = ANY (${UNFINISHED})` },
    { name: `${RUNS_TABLE}_finished_idx`, columns: ['updated_at_ms'], unique: false, method: 'btree', predicate: `status = ANY (${FINISHED})` },
  ],
  checks: [{ name: `${RUNS_TABLE}_status_check`, expression: `status = ANY (${STATUSES})` }],
});

/** What the store needs of `agent_runtime_run_items`, as migration 1765000000002 creates it. */
export const RUN_ITEMS_TABLE_SPEC: TableSpec = defineTableSpec({
  name: RUN_ITEMS_TABLE,
  columns: [
    { name: 'run_id', ...requiredText },
    { name: 'seq', type: 'integer', nullable: false },
    { name: 'type', ...requiredText },
    { name: 'payload', type: 'jsonb', nullable: false },
    { name: 'created_at_ms', ...requiredBigint },
  ],
  primaryKey: ['run_id', 'seq'],
  foreignKeys: [
    { name: `${RUN_ITEMS_TABLE}_run_fkey`, columns: ['run_id'], references: { table: RUNS_TABLE, columns: ['run_id'] }, onDelete: 'cascade' },
  ],
});

import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** The sessions table of {@link PostgresSessionService}. */
export const SESSION_TABLE = 'agent_runtime_sessions';

/** The events table of {@link PostgresSessionService}. */
export const SESSION_EVENT_TABLE = 'agent_runtime_session_events';

const requiredText = { type: 'text', nullable: false } as const;
const requiredBigint = { type: 'bigint', nullable: false } as const;
const counter = { type: 'bigint', nullable: false, default: '0' } as const;

/** What `PostgresSessionService` needs of `agent_runtime_sessions` (spec 03 §4), as migration 1764700000000 creates it. */
export const SESSION_TABLE_SPEC: TableSpec = defineTableSpec({
  name: SESSION_TABLE,
  columns: [
    { name: 'session_id', ...requiredText },
    { name: 'app_name', ...requiredText },
    { name: 'user_id', ...requiredText },
    { name: 'state', type: 'jsonb', nullable: false },
    { name: 'state_version', ...counter },
    { name: 'last_seq', ...counter },
    { name: 'created_at_ms', ...requiredBigint },
    { name: 'updated_at_ms', ...requiredBigint },
  ],
  primaryKey: ['session_id'],
  indexes: [{ name: `${SESSION_TABLE}_owner_updated_idx`, columns: ['app_name', 'user_id', 'updated_at_ms'], unique: false, method: 'btree' }],
  checks: [
    { name: `${SESSION_TABLE}_state_check`, expression: "jsonb_typeof(state) = 'object'::text" },
    { name: `${SESSION_TABLE}_counters_check`, expression: '(state_version >= 0) AND (last_seq >= 0)' },
  ],
});

/** What `PostgresSessionService` needs of `agent_runtime_session_events` (spec 03 §4), as migration 1764700000000 creates it. */
export const SESSION_EVENT_TABLE_SPEC: TableSpec = defineTableSpec({
  name: SESSION_EVENT_TABLE,
  columns: [
    { name: 'session_id', ...requiredText },
    { name: 'seq', ...requiredBigint },
    { name: 'event_id', ...requiredText },
    { name: 'invocation_id', ...requiredText },
    { name: 'author', ...requiredText },
    { name: 'kind', ...requiredText },
    { name: 'content', type: 'jsonb', nullable: false },
    { name: 'actions', type: 'jsonb', nullable: true },
    { name: 'created_at_ms', ...requiredBigint },
  ],
  primaryKey: ['session_id', 'seq'],
  uniques: [{ name: `${SESSION_EVENT_TABLE}_event_id_key`, columns: ['event_id'] }],
  checks: [
    { name: `${SESSION_EVENT_TABLE}_seq_check`, expression: 'seq >= 1' },
    {
      name: `${SESSION_EVENT_TABLE}_kind_check`,
      expression:
        "kind = ANY (ARRAY['user_message'::text, 'model_turn'::text, 'tool_response'::text, 'confirmation_requested'::text, 'final_output'::text, 'policy_audit'::text])",
    },
    { name: `${SESSION_EVENT_TABLE}_actions_check`, expression: "(actions IS NULL) OR (jsonb_typeof(actions) = 'object'::text)" },
  ],
  foreignKeys: [
    {
      name: `${SESSION_EVENT_TABLE}_session_id_fkey`,
      columns: ['session_id'],
      references: { table: SESSION_TABLE, columns: ['session_id'] },
      onDelete: 'cascade',
    },
  ],
});

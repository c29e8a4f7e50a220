import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** The entries of the Postgres memory adapter. */
export const MEMORY_ENTRIES_TABLE = 'agent_runtime_memory_entries';

/** The erasure epoch of each memory scope, shared by the Postgres memory adapter and the memory outbox (spec 07 §6.1). */
export const MEMORY_EPOCHS_TABLE = 'agent_runtime_memory_erasure_epochs';

const keyText = { type: 'text', nullable: false, collation: 'C' } as const;
const requiredText = { type: 'text', nullable: false } as const;
const requiredBigint = { type: 'bigint', nullable: false } as const;

/** What the Postgres memory adapter needs of `agent_runtime_memory_entries` (spec 07 §2), as migration `RuntimeMemory1764900000001` creates it. */
export const MEMORY_ENTRIES_TABLE_SPEC: TableSpec = defineTableSpec({
  name: MEMORY_ENTRIES_TABLE,
  columns: [
    { name: 'entry_id', ...keyText },
    { name: 'app_name', ...keyText },
    { name: 'user_id', ...keyText },
    { name: 'event_id', ...keyText },
    { name: 'epoch', ...requiredBigint },
    { name: 'author', ...requiredText },
    { name: 'content', ...requiredText },
    { name: 'metadata', type: 'jsonb', nullable: false },
    { name: 'timestamp_ms', ...requiredBigint },
    { name: 'created_at_ms', ...requiredBigint },
    { name: 'search', type: 'tsvector', nullable: true, generated: "to_tsvector('simple'::regconfig, content)" },
  ],
  primaryKey: ['entry_id'],
  uniques: [{ name: `${MEMORY_ENTRIES_TABLE}_event_key`, columns: ['app_name', 'user_id', 'event_id'] }],
  indexes: [
    { name: `${MEMORY_ENTRIES_TABLE}_search_idx`, columns: ['search'], unique: false, method: 'gin' },
    { name: `${MEMORY_ENTRIES_TABLE}_scope_time_idx`, columns: ['app_name', 'user_id', 'timestamp_ms'], unique: false, method: 'btree' },
  ],
  checks: [
    { name: `${MEMORY_ENTRIES_TABLE}_epoch_check`, expression: 'epoch >= 0' },
    { name: `${MEMORY_ENTRIES_TABLE}_metadata_check`, expression: "jsonb_typeof(metadata) = 'object'::text" },
  ],
});

/** What the memory adapter and the outbox need of `agent_runtime_memory_erasure_epochs` (spec 07 §6.1), as migration `RuntimeMemory1764900000001` creates it. */
export const MEMORY_EPOCHS_TABLE_SPEC: TableSpec = defineTableSpec({
  name: MEMORY_EPOCHS_TABLE,
  columns: [
    { name: 'app_name', ...keyText },
    { name: 'user_id', ...keyText },
    { name: 'epoch', ...requiredBigint },
    { name: 'updated_at_ms', ...requiredBigint },
  ],
  primaryKey: ['app_name', 'user_id'],
  checks: [{ name: `${MEMORY_EPOCHS_TABLE}_epoch_check`, expression: 'epoch >= 0' }],
});

/** Both tables of the Postgres memory adapter, for the bundle's `schema` stage. */
export const MEMORY_TABLE_SPECS: readonly TableSpec[] = Object.freeze([MEMORY_ENTRIES_TABLE_SPEC, MEMORY_EPOCHS_TABLE_SPEC]);

import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** The outbox's jobs table (spec 07 §6.1). */
export const OUTBOX_JOBS_TABLE = 'agent_runtime_memory_outbox_jobs';
/** The outbox's usage counters: rows `global`, `health` and `scope:<scope key>`. */
export const OUTBOX_USAGE_TABLE = 'agent_runtime_memory_outbox_usage';
/** The erasure epochs the outbox reads (owned by the memory adapter's migration); a missing row is epoch 0. */
export const MEMORY_ERASURE_EPOCHS_TABLE = 'agent_runtime_memory_erasure_epochs';

/** Phases of an outbox job; the first three are active, the others terminal. */
export type OutboxJobPhase = 'pending' | 'running' | 'retry_wait' | 'completed' | 'failed' | 'cancelled';

const keyText = { type: 'text', nullable: false, collation: 'C' } as const;
const requiredText = { type: 'text', nullable: false } as const;
const requiredBigint = { type: 'bigint', nullable: false } as const;
const requiredInteger = { type: 'integer', nullable: false } as const;
const J = OUTBOX_JOBS_TABLE;
const U = OUTBOX_USAGE_TABLE;
const ACTIVE_PHASES = "ARRAY['pending'::text, 'running'::text, 'retry_wait'::text]";

/**
 * The shape the outbox needs of its two tables (spec 07 §6.1), as the schema validator compares it
 * with the catalog and as migration `MemoryOutbox1764900000002` creates it.
 */
export const OUTBOX_TABLE_SPECS: readonly TableSpec[] = Object.freeze([
  defineTableSpec({
    name: J,
    columns: [
      { name: 'job_id', ...keyText },
      { name: 'adapter_id', ...keyText },
      { name: 'app_name', ...keyText },
      { name: 'user_id', ...keyText },
      { name: 'epoch', ...requiredBigint },
      { name: 'phase', ...requiredText },
      { name: 'events', type: 'jsonb', nullable: false },
      { name: 'event_count', ...requiredInteger },
      { name: 'job_bytes', ...requiredInteger },
      { name: 'attempts', ...requiredInteger },
      { name: 'max_attempts', ...requiredInteger },
      { name: 'due_at_ms', ...requiredBigint },
      { name: 'lease_token', type: 'uuid', nullable: true },
      { name: 'lease_until_ms', ...requiredBigint, default: '0' },
      { name: 'last_error', type: 'text', nullable: true },
      { name: 'created_at_ms', ...requiredBigint },
      { name: 'updated_at_ms', ...requiredBigint },
      { name: 'finished_at_ms', type: 'bigint', nullable: true },
    ],
    primaryKey: ['job_id'],
    indexes: [
      {
        name: `${J}_due_idx`,
        columns: ['due_at_ms', 'created_at_ms', 'job_id'],
        unique: false,
        method: 'btree',
        predicate: "phase = ANY (ARRAY['pending'::text, 'retry_wait'::text])",
      },
      { name: `${J}_lease_idx`, columns: ['lease_until_ms'], unique: false, method: 'btree', predicate: "phase = 'running'::text" },
      { name: `${J}_scope_idx`, columns: ['app_name', 'user_id', 'epoch'], unique: false, method: 'btree', predicate: 'finished_at_ms IS NULL' },
      { name: `${J}_terminal_idx`, columns: ['finished_at_ms', 'job_id'], unique: false, method: 'btree', predicate: 'finished_at_ms IS NOT NULL' },
    ],
    checks: [
      {
        name: `${J}_phase_check`,
        expression: "phase = ANY (ARRAY['pending'::text, 'running'::text, 'retry_wait'::text, 'completed'::text, 'failed'::text, 'cancelled'::text])",
      },
      { name: `${J}_lease_check`, expression: "(phase = 'running'::text) = (lease_token IS NOT NULL)" },
      { name: `${J}_attempts_check`, expression: '(attempts >= 0) AND (attempts <= max_attempts)' },
      { name: `${J}_max_attempts_check`, expression: '(max_attempts >= 1) AND (max_attempts <= 10)' },
      { name: `${J}_finished_check`, expression: `(finished_at_ms IS NULL) = (phase = ANY (${ACTIVE_PHASES}))` },
    ],
  }),
  defineTableSpec({
    name: U,
    columns: [
      { name: 'usage_key', ...keyText },
      { name: 'active_jobs', ...requiredInteger },
      { name: 'active_bytes', ...requiredBigint },
      { name: 'terminal_jobs', ...requiredInteger },
      { name: 'updated_at_ms', ...requiredBigint },
    ],
    primaryKey: ['usage_key'],
    checks: [
      { name: `${U}_key_check`, expression: "(usage_key = ANY (ARRAY['global'::text, 'health'::text])) OR (usage_key ~ '^scope:[0-9a-f]{64}$'::text)" },
      { name: `${U}_counters_check`, expression: '(active_jobs >= 0) AND (active_bytes >= 0) AND (terminal_jobs >= 0)' },
    ],
  }),
]);

import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** Default table prefix of the evaluation store (option `tablePrefix`). */
export const DEFAULT_EVAL_TABLE_PREFIX = 'agent_runtime_eval_';

/**
 * Table prefixes the store accepts: short enough that the longest table name
 * (`<prefix>set_revisions`) and every constraint and index name (at most 22 more characters) stay
 * within Postgres's 63 characters.
 */
export const EVAL_TABLE_PREFIX = /^[a-z_][a-z0-9_]{0,40}$/;

/** True when `prefix` can be a table prefix of the store (`^[a-z_][a-z0-9_]{0,40}$`). */
export function isEvalTablePrefix(prefix: unknown): prefix is string {
  return typeof prefix === 'string' && EVAL_TABLE_PREFIX.test(prefix);
}

/** The five table names of a prefix. */
export interface EvalTableNames {
  readonly setRevisions: string;
  readonly jobs: string;
  readonly baselines: string;
  readonly usage: string;
  readonly identity: string;
}

/** The table names of `prefix` (spec 05 §2.2); throws a `TypeError` for a prefix that breaks the rule. */
export function evalTableNames(prefix: string = DEFAULT_EVAL_TABLE_PREFIX): EvalTableNames {
  assertPrefix(prefix);
  return Object.freeze({
    setRevisions: `${prefix}set_revisions`,
    jobs: `${prefix}jobs`,
    baselines: `${prefix}baselines`,
    usage: `${prefix}usage`,
    identity: `${prefix}identity`,
  });
}

const keyText = { type: 'text', nullable: false, collation: 'C' } as const;
const requiredText = { type: 'text', nullable: false } as const;
const requiredBigint = { type: 'bigint', nullable: false } as const;
const requiredInteger = { type: 'integer', nullable: false } as const;
const requiredJsonb = { type: 'jsonb', nullable: false } as const;
const setKey = ['scope_app', 'eval_set_id', 'eval_set_version'];
const ACTIVE_PHASES = "ARRAY['queued'::text, 'running'::text]";

/**
 * The shape the store needs of its five tables (spec 05 §2.2), as the validator compares it with the
 * catalog and as migration `EvaluationStore1764800000000` (or `createEvalStoreMigrations(prefix)`)
 * creates it. Names derive from `prefix`; a prefix breaking the rule throws a `TypeError`.
 */
export function evalStoreTableSpecs(prefix: string = DEFAULT_EVAL_TABLE_PREFIX): TableSpec[] {
  const t = evalTableNames(prefix);
  const p = prefix;
  return [
    defineTableSpec({
      name: t.setRevisions,
      columns: [
        { name: 'scope_app', ...keyText },
        { name: 'eval_set_id', ...keyText },
        { name: 'eval_set_version', ...keyText },
        { name: 'digest', ...requiredText },
        { name: 'content', ...requiredJsonb },
        { name: 'content_bytes', ...requiredInteger },
        { name: 'created_at_ms', ...requiredBigint },
      ],
      primaryKey: setKey,
      indexes: [{ name: `${p}set_created_idx`, columns: ['scope_app', 'created_at_ms'], unique: false, method: 'btree' }],
      checks: [{ name: `${p}set_digest_check`, expression: "digest ~ '^[0-9a-f]{64}$'::text" }],
    }),
    defineTableSpec({
      name: t.jobs,
      columns: [
        { name: 'job_id', ...keyText },
        { name: 'scope_app', ...keyText },
        { name: 'eval_set_id', ...keyText },
        { name: 'eval_set_version', ...keyText },
        { name: 'agent', ...requiredText },
        { name: 'metrics', ...requiredJsonb },
        { name: 'options', ...requiredJsonb },
        { name: 'metadata', ...requiredJsonb },
        { name: 'request_bytes', ...requiredInteger },
        { name: 'record_bytes', ...requiredInteger },
        { name: 'phase', ...requiredText },
        { name: 'revision', ...requiredBigint },
        { name: 'created_at_ms', ...requiredBigint },
        { name: 'updated_at_ms', ...requiredBigint },
        { name: 'reason', type: 'text', nullable: true },
        { name: 'result', type: 'jsonb', nullable: true },
        { name: 'started_at_ms', type: 'bigint', nullable: true },
        { name: 'finished_at_ms', type: 'bigint', nullable: true },
      ],
      primaryKey: ['job_id'],
      indexes: [
        { name: `${p}job_created_idx`, columns: ['scope_app', 'created_at_ms', 'job_id'], unique: false, method: 'btree' },
        { name: `${p}job_active_idx`, columns: ['phase'], unique: false, method: 'btree', predicate: `phase = ANY (${ACTIVE_PHASES})` },
        { name: `${p}job_finished_idx`, columns: ['finished_at_ms', 'job_id'], unique: false, method: 'btree', predicate: 'finished_at_ms IS NOT NULL' },
        { name: `${p}job_set_idx`, columns: setKey, unique: false, method: 'btree' },
      ],
      checks: [
        { name: `${p}job_id_check`, expression: "job_id ~ '^eval-[0-9a-f]{32}$'::text" },
        {
          name: `${p}job_phase_check`,
          expression: "phase = ANY (ARRAY['queued'::text, 'running'::text, 'completed'::text, 'failed'::text, 'timed_out'::text, 'cancelled'::text])",
        },
        { name: `${p}job_reason_check`, expression: 'octet_length(reason) <= 4096' },
        { name: `${p}job_result_check`, expression: "(result IS NULL) OR (phase = 'completed'::text)" },
        { name: `${p}job_finished_check`, expression: `(finished_at_ms IS NULL) = (phase = ANY (${ACTIVE_PHASES}))` },
      ],
      foreignKeys: [{ name: `${p}job_set_fkey`, columns: setKey, references: { table: t.setRevisions, columns: setKey }, onDelete: 'restrict' }],
    }),
    defineTableSpec({
      name: t.baselines,
      columns: [
        { name: 'scope_app', ...keyText },
        { name: 'eval_set_id', ...keyText },
        { name: 'name', ...keyText },
        { name: 'job_id', ...keyText },
        { name: 'created_at_ms', ...requiredBigint },
        { name: 'updated_at_ms', ...requiredBigint },
      ],
      primaryKey: ['scope_app', 'eval_set_id', 'name'],
      indexes: [{ name: `${p}baseline_job_idx`, columns: ['job_id'], unique: false, method: 'btree' }],
      foreignKeys: [{ name: `${p}baseline_job_fkey`, columns: ['job_id'], references: { table: t.jobs, columns: ['job_id'] }, onDelete: 'restrict' }],
    }),
    defineTableSpec({
      name: t.usage,
      columns: [
        { name: 'scope_app', ...keyText },
        { name: 'sets', ...requiredInteger },
        { name: 'jobs', ...requiredInteger },
        { name: 'baselines', ...requiredInteger },
        { name: 'bytes', ...requiredBigint },
        { name: 'updated_at_ms', ...requiredBigint },
      ],
      primaryKey: ['scope_app'],
      checks: [{ name: `${p}usage_counters_check`, expression: '(sets >= 0) AND (jobs >= 0) AND (baselines >= 0) AND (bytes >= 0)' }],
    }),
    defineTableSpec({
      name: t.identity,
      columns: [
        { name: 'singleton', type: 'boolean', nullable: false },
        { name: 'identity_uuid', type: 'uuid', nullable: false },
        { name: 'created_at_ms', ...requiredBigint },
      ],
      primaryKey: ['singleton'],
      checks: [{ name: `${p}identity_check`, expression: 'singleton' }],
    }),
  ];
}

function assertPrefix(prefix: unknown): asserts prefix is string {
  if (!isEvalTablePrefix(prefix)) throw new TypeError('tablePrefix must match ^[a-z_][a-z0-9_]{0,40}$');
}

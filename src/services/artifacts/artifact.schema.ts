import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** The table of stored versions (spec 07 §2). */
export const ARTIFACT_TABLE = 'agent_runtime_artifacts';
/** The table of heads: the next version of each `(scope, filename)`. */
export const ARTIFACT_HEAD_TABLE = 'agent_runtime_artifact_heads';

const keyText = { type: 'text', nullable: false, collation: 'C' } as const;
const requiredBigint = { type: 'bigint', nullable: false } as const;
const fileKey = ['app_name', 'user_id', 'session_id', 'filename'];
const fileKeyColumns = fileKey.map((name) => ({ name, ...keyText }));

/**
 * The two tables of the Postgres artifact adapter as migration `RuntimeArtifacts1764900000000`
 * creates them, for the bundle's schema stage (the shared validator compares them with the catalog).
 */
export const ARTIFACT_TABLE_SPECS: readonly TableSpec[] = Object.freeze([
  defineTableSpec({
    name: ARTIFACT_HEAD_TABLE,
    columns: [...fileKeyColumns, { name: 'next_version', ...requiredBigint }],
    primaryKey: fileKey,
    checks: [{ name: 'agent_runtime_artifact_heads_next_version_check', expression: '(next_version >= 1)' }],
  }),
  defineTableSpec({
    name: ARTIFACT_TABLE,
    columns: [
      ...fileKeyColumns,
      { name: 'version', ...requiredBigint },
      { name: 'data', type: 'bytea', nullable: false },
      { name: 'size_bytes', ...requiredBigint },
      { name: 'sha256', type: 'text', nullable: false },
      { name: 'mime_type', type: 'text', nullable: false },
      { name: 'custom_metadata', type: 'jsonb', nullable: false },
      { name: 'created_at_ms', ...requiredBigint },
    ],
    primaryKey: [...fileKey, 'version'],
    checks: [
      { name: 'agent_runtime_artifacts_version_check', expression: '(version >= 1)' },
      { name: 'agent_runtime_artifacts_size_check', expression: '(size_bytes = octet_length(data))' },
      { name: 'agent_runtime_artifacts_sha256_check', expression: "(sha256 ~ '^[0-9a-f]{64}$'::text)" },
      { name: 'agent_runtime_artifacts_metadata_check', expression: "(jsonb_typeof(custom_metadata) = 'object'::text)" },
    ],
    foreignKeys: [{ name: 'agent_runtime_artifacts_head_fkey', columns: fileKey, references: { table: ARTIFACT_HEAD_TABLE, columns: fileKey }, onDelete: 'restrict' }],
  }),
]);

import { qualifiedTable } from '../../database/qualified-table';
import { ARTIFACT_HEAD_TABLE, ARTIFACT_TABLE } from './artifact.schema';

/** `$1..$4`: the file key `(app_name, user_id, session_id, filename)`; `session_id` is `''` at user level. */
const FILE = 'app_name = $1::text AND user_id = $2::text AND session_id = $3::text AND filename = $4::text';
const INFO = 'version, mime_type, size_bytes, sha256, custom_metadata, created_at_ms';

/**
 * Every statement of the Postgres artifact adapter, with fully qualified table names so a later
 * change of `search_path` cannot redirect them. `jsonb` goes in as JSON text (`$n::jsonb`).
 */
export function artifactStatements(schema: string) {
  const artifacts = qualifiedTable(schema, ARTIFACT_TABLE);
  const heads = qualifiedTable(schema, ARTIFACT_HEAD_TABLE);
  const maxVersion = `SELECT max(a.version) FROM ${artifacts} AS a
      WHERE a.app_name = h.app_name AND a.user_id = h.user_id AND a.session_id = h.session_id AND a.filename = h.filename`;
  return Object.freeze({
    // a save (spec 07 §2): the head row exists (created on the first save), then is locked and read,
    // then the version is inserted and the head advanced, all in the save's transaction
    ensureHead: `INSERT INTO ${heads} (app_name, user_id, session_id, filename, next_version)
      VALUES ($1::text, $2::text, $3::text, $4::text, 1) ON CONFLICT DO NOTHING`,
    // a version some other writer inserted without advancing the head moves the number past it
    lockHead: `SELECT GREATEST(h.next_version, coalesce((${maxVersion}), 0) + 1) AS version
      FROM ${heads} AS h WHERE h.app_name = $1::text AND h.user_id = $2::text AND h.session_id = $3::text AND h.filename = $4::text
      FOR UPDATE OF h`,
    insertVersion: `WITH inserted AS (
        INSERT INTO ${artifacts} (app_name, user_id, session_id, filename, version, data, size_bytes, sha256, mime_type, custom_metadata, created_at_ms)
        VALUES ($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bytea, $7::bigint, $8::text, $9::text, $10::jsonb, $11::bigint)
        RETURNING version)
      UPDATE ${heads} SET next_version = (SELECT version FROM inserted) + 1 WHERE ${FILE} RETURNING next_version`,

    loadLatest: `SELECT ${INFO}, data FROM ${artifacts} WHERE ${FILE} ORDER BY version DESC LIMIT 1`,
    loadVersion: `SELECT ${INFO}, data FROM ${artifacts} WHERE ${FILE} AND version = $5::bigint`,

    // $4 the last filename returned ('' before the first page: every filename is longer), $5 the rows to read
    listKeys: `SELECT h.filename FROM ${heads} AS h
      WHERE h.app_name = $1::text AND h.user_id = $2::text AND h.session_id = $3::text AND h.filename > $4::text
        AND EXISTS (SELECT 1 FROM ${artifacts} AS a
          WHERE a.app_name = h.app_name AND a.user_id = h.user_id AND a.session_id = h.session_id AND a.filename = h.filename)
      ORDER BY h.filename LIMIT $5::integer`,
    // $5 the last version returned (0 before the first page), $6 the rows to read
    listVersions: `SELECT ${INFO} FROM ${artifacts} WHERE ${FILE} AND version > $5::bigint ORDER BY version LIMIT $6::integer`,

    deleteAll: `WITH deleted AS (DELETE FROM ${artifacts} WHERE ${FILE} RETURNING 1) SELECT count(*)::integer AS count FROM deleted`,
    deleteVersion: `WITH deleted AS (DELETE FROM ${artifacts} WHERE ${FILE} AND version = $5::bigint RETURNING 1) SELECT count(*)::integer AS count FROM deleted`,
    deleteLatest: `WITH deleted AS (DELETE FROM ${artifacts} WHERE ${FILE}
        AND version = (SELECT max(version) FROM ${artifacts} WHERE ${FILE}) RETURNING 1)
      SELECT count(*)::integer AS count FROM deleted`,
  });
}

/** The statements of one adapter. */
export type ArtifactStatements = ReturnType<typeof artifactStatements>;

/** What every statement of a file takes first: `[app_name, user_id, session_id, filename]`. */
export function fileValues(scope: { readonly appName: string; readonly userId: string; readonly sessionId?: string }, filename: string): unknown[] {
  return [scope.appName, scope.userId, scope.sessionId ?? '', filename];
}

/**
 * The SQL of `PostgresSessionService` (spec 03 §4), one statement per operation, so each runs in
 * one implicit transaction and one round trip. Writes to a session take its row lock first: an
 * append bumps `last_seq` with `UPDATE … RETURNING` and inserts the event at that `seq` in the same
 * statement, so concurrent appends to one session queue on the row and never share a `seq`, and an
 * append that fails (a duplicate `event_id`) rolls its bump back with it, leaving no gap.
 */

/** The statements for the two (already qualified and quoted) tables. */
export interface SessionStatements {
  /** $1 session_id, $2 app_name, $3 user_id, $4 state json, $5 now */
  readonly create: string;
  /** $1 session_id, $2 app_name, $3 user_id */
  readonly get: string;
  /** $1 app_name, $2 user_id, $3 limit|null, $4 offset */
  readonly list: string;
  /** $1 session_id, $2 app_name, $3 user_id */
  readonly delete: string;
  /** $1 session_id, $2 app_name, $3 user_id, $4 event_id, $5 invocation_id, $6 author, $7 kind, $8 content json, $9 actions json|null, $10 now */
  readonly append: string;
  /** $1 session_id, $2 app_name, $3 user_id, $4 after seq, $5 limit|null; one row with a null `seq` when the session has no such event */
  readonly listEvents: string;
  /** $1 session_id, $2 app_name, $3 user_id, $4 expected version|null, $5 keys to remove, $6 members to set json, $7 now */
  readonly updateState: string;
}

const sessionColumns = (t: string) =>
  `${t}.session_id, ${t}.app_name, ${t}.user_id, ${t}.state::text AS state_json, ${t}.state_version, ${t}.last_seq, ${t}.created_at_ms, ${t}.updated_at_ms`;

const OWNED = 's.session_id = $1 AND s.app_name = $2 AND s.user_id = $3';

/** Builds the statements for `sessions` and `events`, qualified names whose parts are validated identifiers. */
export function sessionStatements(sessions: string, events: string): SessionStatements {
  return Object.freeze({
    // the primary key spans apps and users: an id taken anywhere inserts nothing
    create: `INSERT INTO ${sessions} AS s (session_id, app_name, user_id, state, state_version, last_seq, created_at_ms, updated_at_ms)
      VALUES ($1, $2, $3, $4::jsonb, 0, 0, $5, $5)
      ON CONFLICT (session_id) DO NOTHING
      RETURNING ${sessionColumns('s')}`,

    get: `SELECT ${sessionColumns('s')} FROM ${sessions} AS s WHERE ${OWNED}`,

    // COLLATE "C" orders ids by code unit, as the in-memory service does, whatever the database collation
    list: `SELECT ${sessionColumns('s')} FROM ${sessions} AS s WHERE s.app_name = $1 AND s.user_id = $2
      ORDER BY s.updated_at_ms DESC, s.session_id COLLATE "C" LIMIT $3::bigint OFFSET $4::bigint`,

    delete: `DELETE FROM ${sessions} AS s WHERE ${OWNED} RETURNING s.session_id`,

    append: `WITH bumped AS (
        UPDATE ${sessions} AS s SET last_seq = s.last_seq + 1, updated_at_ms = $10::bigint WHERE ${OWNED}
        RETURNING s.session_id, s.last_seq)
      INSERT INTO ${events} (session_id, seq, event_id, invocation_id, author, kind, content, actions, created_at_ms)
      SELECT b.session_id, b.last_seq, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::bigint FROM bumped b
      RETURNING seq`,

    // LEFT JOIN LATERAL: a session without matching events still gives one row, a missing one none
    listEvents: `SELECT e.seq, e.event_id, e.invocation_id, e.author, e.kind, e.content_json, e.actions_json, e.created_at_ms
      FROM ${sessions} AS s LEFT JOIN LATERAL (
        SELECT v.seq, v.event_id, v.invocation_id, v.author, v.kind, v.content::text AS content_json, v.actions::text AS actions_json, v.created_at_ms
          FROM ${events} AS v WHERE v.session_id = s.session_id AND v.seq > $4::bigint ORDER BY v.seq LIMIT $5::bigint) e ON true
      WHERE ${OWNED} ORDER BY e.seq`,

    updateState: `WITH locked AS MATERIALIZED (SELECT s.session_id, s.state_version FROM ${sessions} AS s WHERE ${OWNED} FOR UPDATE),
      decided AS MATERIALIZED (
        SELECT l.session_id, ($4::bigint IS NULL OR l.state_version = $4::bigint) AS ok FROM locked l),
      written AS (
        UPDATE ${sessions} AS t SET state = (t.state - $5::text[]) || $6::jsonb, state_version = t.state_version + 1, updated_at_ms = $7::bigint
        FROM decided d WHERE t.session_id = d.session_id AND d.ok
        RETURNING ${sessionColumns('t')})
      SELECT d.ok, w.* FROM decided d LEFT JOIN written w ON true`,
  });
}

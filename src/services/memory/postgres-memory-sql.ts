import { qualifiedTable } from '../../database/qualified-table';
import { MEMORY_ENTRIES_TABLE, MEMORY_EPOCHS_TABLE } from './memory.schema';

/** The statements of the Postgres memory adapter, on the tables of one schema. */
export interface MemoryStatements {
  /** `$1` app, `$2` user → the scope's epoch row, share-locked until the transaction ends (no row: none yet). */
  readonly lockEpoch: string;
  /** `$1` app, `$2` user: the scope's epoch row at 0 unless it exists, so that there is a row to lock. */
  readonly seedEpoch: string;
  /**
   * `$1` app, `$2` user, `$3` epoch, `$4`..`$9` parallel arrays of entry id, event id, author,
   * content, metadata JSON and timestamp → the `entry_id` of each row inserted (present ones are skipped).
   */
  readonly insertEntries: string;
  /** `$1` app, `$2` user → the scope's new epoch: 1 for a first erasure, else the old one + 1; the row stays locked. */
  readonly raiseEpoch: string;
  /** `$1` app, `$2` user: deletes the scope's entries. */
  readonly deleteEntries: string;
  /**
   * `$1` app, `$2` user, `$3` query, `$4` most hits, `$5` most content bytes → the ranked hits: the
   * first `$4` by rank, then the longest prefix of those whose content fits `$5`.
   */
  readonly search: string;
}

/** The database clock in whole milliseconds, read when the statement runs (as the ledger and the outbox read it). */
const NOW_MS = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** The statements on the tables of `schema` (`null`: the connection's search path). */
export function memoryStatements(schema: string | null): MemoryStatements {
  const entries = qualifiedTable(schema, MEMORY_ENTRIES_TABLE);
  const epochs = qualifiedTable(schema, MEMORY_EPOCHS_TABLE);
  const rank = 'score DESC, timestamp_ms DESC, entry_id';
  return Object.freeze({
    lockEpoch: `SELECT epoch FROM ${epochs} WHERE app_name = $1 AND user_id = $2 FOR SHARE`,
    seedEpoch: `INSERT INTO ${epochs} (app_name, user_id, epoch, updated_at_ms) VALUES ($1, $2, 0, ${NOW_MS}) ON CONFLICT (app_name, user_id) DO NOTHING`,
    insertEntries: `INSERT INTO ${entries} (entry_id, app_name, user_id, event_id, epoch, author, content, metadata, timestamp_ms, created_at_ms)
      SELECT e.entry_id, $1, $2, e.event_id, $3, e.author, e.content, e.metadata::jsonb, e.timestamp_ms, ${NOW_MS}
      FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[]) AS e(entry_id, event_id, author, content, metadata, timestamp_ms)
      ON CONFLICT DO NOTHING
      RETURNING entry_id`,
    raiseEpoch: `INSERT INTO ${epochs} AS current (app_name, user_id, epoch, updated_at_ms) VALUES ($1, $2, 1, ${NOW_MS})
      ON CONFLICT (app_name, user_id) DO UPDATE SET epoch = current.epoch + 1, updated_at_ms = EXCLUDED.updated_at_ms
      RETURNING epoch`,
    deleteEntries: `DELETE FROM ${entries} WHERE app_name = $1 AND user_id = $2`,
    search: `SELECT entry_id, content, author, timestamp_ms, score FROM (
        SELECT entry_id, content, author, timestamp_ms, score,
          sum(octet_length(content)) OVER (ORDER BY ${rank} ROWS UNBOUNDED PRECEDING) AS running_bytes
        FROM (
          SELECT e.entry_id, e.content, e.author, e.timestamp_ms, ts_rank_cd(e.search, q.query) AS score
          FROM ${entries} AS e, websearch_to_tsquery('simple', $3) AS q(query)
          WHERE e.app_name = $1 AND e.user_id = $2 AND e.search @@ q.query
          ORDER BY ${rank}
          LIMIT $4
        ) AS ranked
      ) AS bounded
      WHERE running_bytes <= $5
      ORDER BY ${rank}`,
  });
}

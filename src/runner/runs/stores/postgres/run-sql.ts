import { instanceIsDeadSql } from '../../../../cluster/cluster-instance';

/** The channel every item and removal is announced on: payload `<run_id>:<seq>` (`0` for a removal). */
export const RUNS_CHANNEL = 'agent_runtime_runs';

const UNFINISHED = `('pending', 'running', 'paused')`;
const EXECUTING = `('pending', 'running')`;
const FINISHED = `('completed', 'failed', 'cancelled', 'timed_out')`;

/** The statements of `PostgresRunStore` for the two (already qualified and quoted) tables. */
export interface RunStatements {
  /** $1 capacity lock key */
  readonly lockCapacity: string;
  /** counts `active` and `total` */
  readonly count: string;
  /** $1 how many: removes the oldest finished runs, announcing each */
  readonly evictFinished: string;
  /** $1 run_id … $12 owner_instance */
  readonly insert: string;
  /** $1 run_id */
  readonly get: string;
  /** $1 run_id: the row, locked to the end of the transaction */
  readonly lock: string;
  /** $1 run_id, $2 status, $3 invocation_id, $4 pending json, $5 error json, $6 owner, $7 updated_at_ms, $8 last_item_seq, $9 oldest_item_seq */
  readonly update: string;
  /** the `update` parameters, then $10 type, $11 payload json, $12 first seq to evict, $13 notification payload */
  readonly append: string;
  /** $1 run_id, $2 after seq: the run's counters and its items after the seq, one row per item (one with null seq when none) */
  readonly itemsAfter: string;
  /** $1 run_id, $2 notification payload */
  readonly delete: string;
  readonly countActive: string;
  /** $1 run ids: their `last_item_seq` */
  readonly lastSeqs: string;
  /** $1 this instance, $2 limit, $3 also its own runs (left by an earlier life of this instance id) */
  readonly claimOrphans: string;
  /** $1 this instance, $2 ids of the runs executing here, $3 limit: its other executing runs, oldest first */
  readonly ownedIdle: string;
  /** $1 finished before (wall ms), $2 limit: removes finished runs, announcing each */
  readonly pruneFinished: string;
}

/** Columns of a run as `runOf` reads them. */
const runColumns = (t: string) =>
  `${t}.run_id, ${t}.agent, ${t}.user_id, ${t}.owner_principal, ${t}.session_id, ${t}.invocation_id, ${t}.status, ${t}.pending_call_ids::text AS pending_json,
   ${t}.error::text AS error_json, ${t}.owner_instance, ${t}.durable, ${t}.created_at_ms, ${t}.updated_at_ms, ${t}.last_item_seq, ${t}.oldest_item_seq`;

/** Builds the statements; `runs` and `items` are qualified names whose parts are validated identifiers. */
export function runStatements(runs: string, items: string): RunStatements {
  const announceGone = `SELECT pg_notify('${RUNS_CHANNEL}', g.run_id || ':0') FROM gone g`;
  return Object.freeze({
    lockCapacity: 'SELECT pg_advisory_xact_lock($1::bigint)',
    count: `SELECT count(*) FILTER (WHERE r.status IN ${UNFINISHED})::integer AS active, count(*)::integer AS total FROM ${runs} AS r`,
    evictFinished: `WITH gone AS (
        DELETE FROM ${runs} AS d WHERE d.run_id IN (
          SELECT r.run_id FROM ${runs} AS r WHERE r.status IN ${FINISHED} ORDER BY r.updated_at_ms, r.run_id LIMIT $1::integer)
        RETURNING d.run_id)
      ${announceGone}`,
    insert: `INSERT INTO ${runs} (run_id, agent, user_id, session_id, invocation_id, status, pending_call_ids, error, durable, created_at_ms, updated_at_ms,
        last_item_seq, oldest_item_seq, owner_instance, owner_principal)
      VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::jsonb, $8::jsonb, $9::boolean, $10::bigint, $11::bigint, 0, 1, $12::text, $13::text)`,
    get: `SELECT ${runColumns('r')} FROM ${runs} AS r WHERE r.run_id = $1::text`,
    lock: `SELECT ${runColumns('r')} FROM ${runs} AS r WHERE r.run_id = $1::text FOR UPDATE`,
    update: `UPDATE ${runs} SET status = $2::text, invocation_id = $3::text, pending_call_ids = $4::jsonb, error = $5::jsonb, owner_instance = $6::text,
        updated_at_ms = $7::bigint, last_item_seq = $8::integer, oldest_item_seq = $9::integer WHERE run_id = $1::text`,
    // one statement: the counters, the item, the eviction and the notification commit together
    append: `WITH written AS (
        UPDATE ${runs} SET status = $2::text, invocation_id = $3::text, pending_call_ids = $4::jsonb, error = $5::jsonb, owner_instance = $6::text,
          updated_at_ms = $7::bigint, last_item_seq = $8::integer, oldest_item_seq = $9::integer WHERE run_id = $1::text RETURNING run_id),
      item AS (
        INSERT INTO ${items} (run_id, seq, type, payload, created_at_ms) SELECT w.run_id, $8::integer, $10::text, $11::jsonb, $7::bigint FROM written w RETURNING seq),
      evicted AS (DELETE FROM ${items} AS e WHERE e.run_id = $1::text AND e.seq >= $12::integer AND e.seq < $9::integer RETURNING e.seq)
      SELECT pg_notify('${RUNS_CHANNEL}', $13::text), (SELECT count(*) FROM evicted) AS evicted FROM item`,
    itemsAfter: `SELECT r.status, r.last_item_seq, r.oldest_item_seq, i.seq, i.payload_json
      FROM ${runs} AS r LEFT JOIN LATERAL (
        SELECT v.seq, v.payload::text AS payload_json FROM ${items} AS v WHERE v.run_id = r.run_id AND v.seq > $2::integer ORDER BY v.seq) i ON true
      WHERE r.run_id = $1::text ORDER BY i.seq`,
    delete: `WITH gone AS (DELETE FROM ${runs} AS d WHERE d.run_id = $1::text RETURNING d.run_id) ${announceGone}`,
    countActive: `SELECT count(*)::integer AS n FROM ${runs} AS r WHERE r.status IN ${UNFINISHED}`,
    lastSeqs: `SELECT r.run_id, r.last_item_seq FROM ${runs} AS r WHERE r.run_id = ANY($1::text[])`,
    // each distinct owner is probed once; SKIP LOCKED and the owner re-check in the UPDATE let exactly one instance take a run
    claimOrphans: `WITH owners AS MATERIALIZED (
        SELECT DISTINCT r.owner_instance FROM ${runs} AS r
         WHERE r.status IN ${EXECUTING} AND r.owner_instance IS NOT NULL AND (r.owner_instance <> $1::text OR $3::bigint IS NOT NULL)),
      dead AS MATERIALIZED (SELECT o.owner_instance FROM owners o WHERE o.owner_instance = $1::text OR ${instanceIsDeadSql('o.owner_instance')}),
      picked AS MATERIALIZED (
        SELECT r.run_id, r.owner_instance FROM ${runs} AS r JOIN dead d ON d.owner_instance = r.owner_instance
         WHERE r.status IN ${EXECUTING} AND (r.owner_instance <> $1::text OR r.created_at_ms < $3::bigint)
         ORDER BY r.created_at_ms, r.run_id LIMIT $2::integer FOR UPDATE OF r SKIP LOCKED)
      UPDATE ${runs} AS t SET owner_instance = $1::text FROM picked p
       WHERE t.run_id = p.run_id AND t.owner_instance = p.owner_instance AND t.status IN ${EXECUTING}
      RETURNING ${runColumns('t')}`,
    ownedIdle: `SELECT ${runColumns('r')} FROM ${runs} AS r
      WHERE r.owner_instance = $1::text AND r.status IN ${EXECUTING} AND NOT (r.run_id = ANY($2::text[]))
      ORDER BY r.created_at_ms, r.run_id LIMIT $3::integer`,
    pruneFinished: `WITH gone AS (
        DELETE FROM ${runs} AS d WHERE d.run_id IN (
          SELECT r.run_id FROM ${runs} AS r WHERE r.status IN ${FINISHED} AND r.updated_at_ms < $1::bigint
           ORDER BY r.updated_at_ms, r.run_id LIMIT $2::integer FOR UPDATE SKIP LOCKED)
        RETURNING d.run_id)
      ${announceGone}`,
  });
}

import { advisoryLockKey } from '../../database/instance-lock';
import { instanceIsDeadSql } from '../../cluster/cluster-instance';
import { ADMISSION_CONFIG_TABLE as C, ADMISSION_PERMITS_TABLE as P, ADMISSION_QUEUE_TABLE as Q } from './cluster-admission.schema';

/** The channel grants are announced on; the payload is the id of the instance that received them. */
export const ADMISSION_CHANNEL = 'agent_runtime_admission';

/** The one transaction-level advisory lock every admission decision of the cluster takes. */
export const ADMISSION_DECISION_LOCK_KEY = advisoryLockKey('agent_runtime.cluster.admission', 'decisions');

export const LOCK_DECISIONS = 'SELECT pg_advisory_xact_lock($1::bigint)';

const I = 'agent_runtime_cluster_instances';

/**
 * The opening of every decision, in one statement under the lock ($1 this instance, $2 its refs to
 * retire, $3 its refs to look up, $4 `true` to retire all its rows): reaps the rows of dead instances
 * (never this one's), deletes this instance's retired requests wherever they are (queue or permits,
 * so a grant that raced a cancel is returned too), and reads the counts after both. Every part of a
 * statement sees the same snapshot, so the counts are those before the deletes minus what they removed.
 *
 * A dead instance is reaped only once it has been seen dead for its `reap_after_ms` (its lock grace
 * plus margin): the first decision that finds its lock free writes `dead_since`, and by the time
 * `dead_since + reap_after_ms` has passed the instance has revoked its own permits by its clock. The
 * probe holds the shared lock to the end of the transaction, so the instance cannot retake its lock
 * (which clears `dead_since`) between the probe and the write.
 */
export const OPEN_DECISION = `
WITH candidates AS (
  SELECT instance_id FROM ${P} WHERE instance_id <> $1
  UNION SELECT instance_id FROM ${Q} WHERE instance_id <> $1
), probed AS MATERIALIZED (
  SELECT c.instance_id, i.dead_since, i.reap_after_ms FROM candidates c LEFT JOIN ${I} i ON i.instance_id = c.instance_id
  WHERE ${instanceIsDeadSql('c.instance_id')}
), first_seen AS (
  INSERT INTO ${I} (instance_id, dead_since) SELECT instance_id, clock_timestamp() FROM probed WHERE dead_since IS NULL
  ON CONFLICT (instance_id) DO UPDATE SET dead_since = coalesce(${I}.dead_since, EXCLUDED.dead_since)
), dead AS MATERIALIZED (
  SELECT instance_id FROM probed WHERE dead_since + reap_after_ms * interval '1 millisecond' <= clock_timestamp()
), gone_permits AS (
  DELETE FROM ${P} WHERE instance_id IN (SELECT instance_id FROM dead)
     OR (instance_id = $1 AND ($4::boolean OR request_id = ANY($2::text[])))
  RETURNING agent_id
), gone_queue AS (
  DELETE FROM ${Q} WHERE instance_id IN (SELECT instance_id FROM dead)
     OR (instance_id = $1 AND ($4::boolean OR request_id = ANY($2::text[])))
  RETURNING agent_id
), work AS (
  SELECT agent_id, 1 AS active, 0 AS queued FROM ${P}
  UNION ALL SELECT agent_id, 0, 1 FROM ${Q}
  UNION ALL SELECT agent_id, -1, 0 FROM gone_permits
  UNION ALL SELECT agent_id, 0, -1 FROM gone_queue
), per_agent AS (
  SELECT agent_id, sum(active)::int AS active, sum(queued)::int AS queued FROM work GROUP BY agent_id
)
SELECT
  (SELECT coalesce(json_agg(json_build_array(agent_id, active, queued)), '[]'::json) FROM per_agent WHERE active > 0 OR queued > 0) AS agents,
  (SELECT coalesce(array_agg(request_id), '{}') FROM ${P} WHERE instance_id = $1 AND request_id = ANY($3::text[])) AS held,
  (SELECT coalesce(array_agg(request_id), '{}') FROM ${Q} WHERE instance_id = $1 AND request_id = ANY($3::text[])) AS waiting,
  (SELECT count(*) FROM ${I} WHERE instance_id = $1 OR NOT ${instanceIsDeadSql('instance_id')})::int AS instances_live`;

/** Grants the oldest queued request among the agents in $1 (those with spare capacity): moves its row to the permits. */
export const GRANT_OLDEST = `
WITH head AS (
  DELETE FROM ${Q} WHERE request_id = (SELECT request_id FROM ${Q} WHERE agent_id = ANY($1::text[]) ORDER BY seq LIMIT 1)
  RETURNING request_id, permit_id, agent_id, instance_id
)
INSERT INTO ${P} (permit_id, request_id, agent_id, instance_id)
SELECT permit_id, request_id, agent_id, instance_id FROM head
RETURNING request_id, agent_id, instance_id`;

export const INSERT_PERMIT = `INSERT INTO ${P} (permit_id, request_id, agent_id, instance_id) VALUES ($1, $2, $3, $4)`;

/** $5: milliseconds left to the deadline, or null; stored as database time for operators only. */
export const INSERT_QUEUED = `
INSERT INTO ${Q} (request_id, permit_id, agent_id, instance_id, deadline_at)
VALUES ($1, $2, $3, $4, CASE WHEN $5::double precision IS NULL THEN NULL ELSE clock_timestamp() + $5::double precision * interval '1 millisecond' END)
RETURNING seq`;

export const NOTIFY_INSTANCES = `SELECT pg_notify('${ADMISSION_CHANNEL}', id) FROM unnest($1::text[]) AS id`;

/** This instance's requests among $2 that hold a permit (read without the lock, after a notification). */
export const SELECT_HELD = `SELECT request_id FROM ${P} WHERE instance_id = $1 AND request_id = ANY($2::text[])`;

export const SELECT_CONFIG = `SELECT fingerprint FROM ${C} WHERE config_key = 'limits'`;
export const INSERT_CONFIG = `INSERT INTO ${C} (fingerprint, limits) VALUES ($1, $2::jsonb)`;

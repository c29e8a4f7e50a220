import {
  ADMISSION_ADAPTIVE_TABLE as A,
  ADMISSION_BUCKETS_TABLE as B,
  ADMISSION_FAIR_TAGS_TABLE as T,
  ADMISSION_PERMITS_TABLE as P,
  ADMISSION_QUEUE_TABLE as Q,
} from './cluster-admission.schema';

/**
 * Everything a flow-control decision (spec 09 §9) reads after the opening, in one statement under the
 * lock: held and queued work by
 * (agent, tenant), the head of every flow (its oldest queued request), the stored buckets, tags and
 * adaptive limits. Buckets and tags are dropped when full or idle, so they stay as small as the work.
 */
export const LOAD_FLOW = `
SELECT
  (SELECT coalesce(json_agg(json_build_array(agent_id, tenant_id, n, c)), '[]'::json)
     FROM (SELECT agent_id, tenant_id, count(*)::int AS n, sum(cost)::double precision AS c FROM ${P} GROUP BY agent_id, tenant_id) held) AS held,
  (SELECT coalesce(json_agg(json_build_array(agent_id, tenant_id, n)), '[]'::json)
     FROM (SELECT agent_id, tenant_id, count(*)::int AS n FROM ${Q} GROUP BY agent_id, tenant_id) queued) AS queued,
  (SELECT coalesce(json_agg(json_build_array(request_id, agent_id, tenant_id, instance_id, permit_id, cost, rank, start_tag, seq, enqueued_ms)), '[]'::json)
     FROM (SELECT DISTINCT ON (agent_id, tenant_id) request_id, agent_id, tenant_id, instance_id, permit_id, cost, rank, start_tag, seq::double precision AS seq,
             enqueued_ms
           FROM ${Q} ORDER BY agent_id, tenant_id, seq) heads) AS heads,
  (SELECT coalesce(json_agg(json_build_array(scope, scope_id, requests, cost, at_ms)), '[]'::json) FROM ${B}) AS buckets,
  (SELECT coalesce(json_agg(json_build_array(tag_key, tag)), '[]'::json) FROM ${T}) AS tags,
  (SELECT coalesce(json_agg(json_build_array(agent_id, effective_limit, ok_count, last_decrease_ms)), '[]'::json) FROM ${A}) AS adaptive`;

/** The next head of flow ($1 agent, $2 tenant or null) after a grant took the previous one. */
export const NEXT_HEAD = `
SELECT request_id, agent_id, tenant_id, instance_id, permit_id, cost, rank, start_tag, seq::double precision AS seq, enqueued_ms
FROM ${Q} WHERE agent_id = $1 AND tenant_id IS NOT DISTINCT FROM $2 ORDER BY seq LIMIT 1`;

/** Moves queued request $1 to the permits, with $2 whether its agent was saturated at the grant. */
export const GRANT_QUEUED = `
WITH head AS (DELETE FROM ${Q} WHERE request_id = $1 RETURNING request_id, permit_id, agent_id, instance_id, tenant_id, cost)
INSERT INTO ${P} (permit_id, request_id, agent_id, instance_id, tenant_id, cost, saturated)
SELECT permit_id, request_id, agent_id, instance_id, tenant_id, cost, $2 FROM head`;

export const INSERT_FLOW_PERMIT = `INSERT INTO ${P} (permit_id, request_id, agent_id, instance_id, tenant_id, cost, saturated) VALUES ($1, $2, $3, $4, $5, $6, $7)`;

/** $5 ms left to the deadline or null (operators only); $6 tenant, $7 cost, $8 rank, $9 start tag, $10 wall-clock enqueue time. */
export const INSERT_FLOW_QUEUED = `
INSERT INTO ${Q} (request_id, permit_id, agent_id, instance_id, deadline_at, tenant_id, cost, rank, start_tag, enqueued_ms)
VALUES ($1, $2, $3, $4, CASE WHEN $5::double precision IS NULL THEN NULL ELSE clock_timestamp() + $5::double precision * interval '1 millisecond' END, $6, $7, $8, $9, $10)
RETURNING seq`;

/** Whether the permits $1 (request ids) were granted to a saturated agent (for reports whose grant this instance did not see). */
export const SELECT_SATURATED = `SELECT request_id, saturated FROM ${P} WHERE request_id = ANY($1::text[])`;

/** Writes the buckets ($1 scopes, $2 ids, $3 request levels, $4 cost levels, $5 times) and deletes $6/$7 (full again). */
export const WRITE_BUCKETS = `
WITH gone AS (DELETE FROM ${B} b USING unnest($6::text[], $7::text[]) AS g(scope, scope_id) WHERE b.scope = g.scope AND b.scope_id = g.scope_id)
INSERT INTO ${B} (scope, scope_id, requests, cost, at_ms)
SELECT * FROM unnest($1::text[], $2::text[], $3::double precision[], $4::double precision[], $5::double precision[])
ON CONFLICT (scope, scope_id) DO UPDATE SET requests = EXCLUDED.requests, cost = EXCLUDED.cost, at_ms = EXCLUDED.at_ms`;

/** Writes the tags ($1 owners, $2 tags) and forgets those of $3 (owners without work). */
export const WRITE_TAGS = `
WITH gone AS (DELETE FROM ${T} WHERE tag_key = ANY($3::text[]))
INSERT INTO ${T} (tag_key, tag) SELECT * FROM unnest($1::text[], $2::double precision[])
ON CONFLICT (tag_key) DO UPDATE SET tag = EXCLUDED.tag`;

/** Writes the adaptive limits ($1 agents, $2 limits, $3 ok counts, $4 last decreases or null). */
export const WRITE_ADAPTIVE = `
INSERT INTO ${A} (agent_id, effective_limit, ok_count, last_decrease_ms)
SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::double precision[])
ON CONFLICT (agent_id) DO UPDATE SET effective_limit = EXCLUDED.effective_limit, ok_count = EXCLUDED.ok_count, last_decrease_ms = EXCLUDED.last_decrease_ms`;

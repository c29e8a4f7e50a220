import { qualifiedTable } from '../../database/qualified-table';
import { BASELINE_COLUMNS, JOB_COLUMNS, SET_SUMMARY_COLUMNS } from './eval-records';
import { evalTableNames } from './eval-store.schema';

const ACTIVE = `('queued', 'running')`;
const SET_KEY = 'scope_app, eval_set_id, eval_set_version';

/**
 * Every statement of the store, with fully qualified table names so a later change of
 * `search_path` cannot redirect them. `jsonb` values are passed as JSON text (`$n::jsonb`):
 * node-postgres would turn a JavaScript array into a Postgres array literal.
 */
export function evalStoreStatements(schema: string, prefix: string) {
  const names = evalTableNames(prefix);
  const sets = qualifiedTable(schema, names.setRevisions);
  const jobs = qualifiedTable(schema, names.jobs);
  const baselines = qualifiedTable(schema, names.baselines);
  const usage = qualifiedTable(schema, names.usage);
  const identity = qualifiedTable(schema, names.identity);
  // terminal jobs finished before $1 (finished_at_ms is set exactly on terminal rows; the phase test says so again)
  const pruneJobsScan = `SELECT j.job_id, j.finished_at_ms, EXISTS (SELECT 1 FROM ${baselines} AS b WHERE b.job_id = j.job_id) AS baselined
      FROM ${jobs} AS j WHERE j.finished_at_ms < $1::bigint AND j.phase NOT IN ${ACTIVE}`;
  const pruneSetsScan = `SELECT s.scope_app, s.eval_set_id, s.eval_set_version,
        EXISTS (SELECT 1 FROM ${jobs} AS j WHERE j.scope_app = s.scope_app AND j.eval_set_id = s.eval_set_id AND j.eval_set_version = s.eval_set_version) AS referenced
      FROM ${sets} AS s WHERE s.created_at_ms < $1::bigint`;
  return Object.freeze({
    identityRow: `SELECT identity_uuid::text AS id FROM ${identity} WHERE singleton`,

    // usage rows: created on demand, then locked (global row '' first, see eval-store-usage.ts)
    ensureUsage: `INSERT INTO ${usage} (scope_app, sets, jobs, baselines, bytes, updated_at_ms) VALUES ($1::text, 0, 0, 0, 0, $2::bigint) ON CONFLICT (scope_app) DO NOTHING`,
    lockUsage: `SELECT sets, jobs, baselines, bytes FROM ${usage} WHERE scope_app = $1::text FOR UPDATE`,
    applyUsage: `UPDATE ${usage} AS u SET sets = u.sets + d.sets, jobs = u.jobs + d.jobs, baselines = u.baselines + d.baselines,
        bytes = u.bytes + d.bytes, updated_at_ms = $6::bigint
      FROM unnest($1::text[], $2::integer[], $3::integer[], $4::integer[], $5::bigint[]) AS d(scope_app, sets, jobs, baselines, bytes)
      WHERE u.scope_app = d.scope_app`,

    recover: `WITH failed AS (
        UPDATE ${jobs} SET phase = 'failed', reason = 'evaluation_service_restarted', revision = revision + 1,
          finished_at_ms = $1::bigint, updated_at_ms = $1::bigint
        WHERE phase IN ${ACTIVE} RETURNING 1)
      SELECT count(*)::integer AS count FROM failed`,

    setDigest: `SELECT digest FROM ${sets} WHERE scope_app = $1::text AND eval_set_id = $2::text AND eval_set_version = $3::text`,
    insertSet: `INSERT INTO ${sets} (${SET_KEY}, digest, content, content_bytes, created_at_ms)
      VALUES ($1::text, $2::text, $3::text, $4::text, $5::jsonb, $6::integer, $7::bigint)`,
    insertJob: `INSERT INTO ${jobs} (job_id, ${SET_KEY}, agent, metrics, options, metadata, request_bytes, record_bytes, phase, revision, created_at_ms, updated_at_ms)
      VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, $7::jsonb, $8::jsonb, $9::integer, $9::integer, 'queued', 0, $10::bigint, $10::bigint)
      RETURNING ${JOB_COLUMNS}`,

    // the compare-and-set of spec 05 §5: $4 the expected phases, $5 the phases from which $3 is legal
    transition: `UPDATE ${jobs} SET phase = $3::text, revision = revision + 1, updated_at_ms = $6::bigint,
        started_at_ms = CASE WHEN $3::text = 'running' THEN $6::bigint ELSE started_at_ms END,
        finished_at_ms = CASE WHEN $3::text IN ${ACTIVE} THEN finished_at_ms ELSE $6::bigint END,
        reason = coalesce($7::text, reason), result = coalesce($8::jsonb, result), record_bytes = record_bytes + $9::integer
      WHERE job_id = $1::text AND scope_app = $2::text AND phase = ANY ($4::text[]) AND phase = ANY ($5::text[])
      RETURNING ${JOB_COLUMNS}`,
    jobPhase: `SELECT phase FROM ${jobs} WHERE job_id = $1::text AND scope_app = $2::text`,

    getJob: `SELECT ${JOB_COLUMNS} FROM ${jobs} WHERE job_id = $1::text AND scope_app = $2::text`,
    getResult: `SELECT ${JOB_COLUMNS}, result FROM ${jobs} WHERE job_id = $1::text AND scope_app = $2::text`,
    listJobs: `SELECT ${JOB_COLUMNS} FROM ${jobs} WHERE scope_app = $1::text ORDER BY created_at_ms, job_id LIMIT $2::integer`,
    listJobsAfter: `SELECT ${JOB_COLUMNS} FROM ${jobs} WHERE scope_app = $1::text AND (created_at_ms, job_id) > ($3::bigint, $4::text)
      ORDER BY created_at_ms, job_id LIMIT $2::integer`,
    getSet: `SELECT ${SET_SUMMARY_COLUMNS}, content FROM ${sets} WHERE scope_app = $1::text AND eval_set_id = $2::text AND eval_set_version = $3::text`,
    listSets: `SELECT ${SET_SUMMARY_COLUMNS} FROM ${sets} WHERE scope_app = $1::text ORDER BY eval_set_id, eval_set_version LIMIT $2::integer`,
    listSetsAfter: `SELECT ${SET_SUMMARY_COLUMNS} FROM ${sets} WHERE scope_app = $1::text AND (eval_set_id, eval_set_version) > ($3::text, $4::text)
      ORDER BY eval_set_id, eval_set_version LIMIT $2::integer`,

    baselineJob: `SELECT eval_set_id, phase FROM ${jobs} WHERE job_id = $1::text AND scope_app = $2::text FOR SHARE`,
    baselineExists: `SELECT 1 FROM ${baselines} WHERE scope_app = $1::text AND eval_set_id = $2::text AND name = $3::text FOR UPDATE`,
    upsertBaseline: `INSERT INTO ${baselines} (scope_app, eval_set_id, name, job_id, created_at_ms, updated_at_ms)
      VALUES ($1::text, $2::text, $3::text, $4::text, $5::bigint, $5::bigint)
      ON CONFLICT (scope_app, eval_set_id, name) DO UPDATE SET job_id = EXCLUDED.job_id, updated_at_ms = EXCLUDED.updated_at_ms
      RETURNING ${BASELINE_COLUMNS}`,
    getBaseline: `SELECT b.eval_set_id, b.name, b.job_id, b.created_at_ms, b.updated_at_ms, j.result
      FROM ${baselines} AS b JOIN ${jobs} AS j ON j.job_id = b.job_id AND j.scope_app = b.scope_app
      WHERE b.scope_app = $1::text AND b.eval_set_id = $2::text AND b.name = $3::text`,

    // prune (spec 05 §6): each scan reads one row more than it may take, to know whether more follow
    pruneBaselines: `SELECT scope_app, eval_set_id, name FROM ${baselines} WHERE updated_at_ms < $1::bigint
      ORDER BY scope_app, eval_set_id, name LIMIT $2::integer FOR UPDATE`,
    pruneBaselinesAfter: `SELECT scope_app, eval_set_id, name FROM ${baselines}
      WHERE updated_at_ms < $1::bigint AND (scope_app, eval_set_id, name) > ($3::text, $4::text, $5::text)
      ORDER BY scope_app, eval_set_id, name LIMIT $2::integer FOR UPDATE`,
    deleteBaselines: `DELETE FROM ${baselines} AS b USING unnest($1::text[], $2::text[], $3::text[]) AS d(scope_app, eval_set_id, name)
      WHERE b.scope_app = d.scope_app AND b.eval_set_id = d.eval_set_id AND b.name = d.name RETURNING b.scope_app`,
    pruneJobs: `${pruneJobsScan} ORDER BY j.finished_at_ms, j.job_id LIMIT $2::integer FOR UPDATE OF j`,
    pruneJobsAfter: `${pruneJobsScan} AND (j.finished_at_ms, j.job_id) > ($3::bigint, $4::text)
      ORDER BY j.finished_at_ms, j.job_id LIMIT $2::integer FOR UPDATE OF j`,
    deleteJobBaselines: `DELETE FROM ${baselines} WHERE job_id = ANY ($1::text[]) RETURNING scope_app`,
    deleteJobs: `DELETE FROM ${jobs} WHERE job_id = ANY ($1::text[]) AND phase NOT IN ${ACTIVE} RETURNING scope_app, record_bytes`,
    pruneSets: `${pruneSetsScan} ORDER BY s.scope_app, s.eval_set_id, s.eval_set_version LIMIT $2::integer FOR UPDATE OF s`,
    pruneSetsAfter: `${pruneSetsScan} AND (s.scope_app, s.eval_set_id, s.eval_set_version) > ($3::text, $4::text, $5::text)
      ORDER BY s.scope_app, s.eval_set_id, s.eval_set_version LIMIT $2::integer FOR UPDATE OF s`,
    deleteSets: `DELETE FROM ${sets} AS s USING unnest($1::text[], $2::text[], $3::text[]) AS d(scope_app, eval_set_id, eval_set_version)
      WHERE s.scope_app = d.scope_app AND s.eval_set_id = d.eval_set_id AND s.eval_set_version = d.eval_set_version
      RETURNING s.scope_app, s.content_bytes`,
  });
}

/** The statements of one store. */
export type EvalStoreStatements = ReturnType<typeof evalStoreStatements>;

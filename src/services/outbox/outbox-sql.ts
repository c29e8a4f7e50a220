import { qualifiedTable } from '../../database/qualified-table';
import { MEMORY_ERASURE_EPOCHS_TABLE, OUTBOX_JOBS_TABLE, OUTBOX_USAGE_TABLE } from './outbox.schema';

/** The database clock in epoch milliseconds (as the ledger reads it, spec 04 §6): every `now` of the outbox. */
export const DB_NOW_MS = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

const WAITING = `('pending', 'retry_wait')`;

/** The lease token of job `jobId` claimed by claim `claimId` (SQL expressions): unique per claim and job, and derivable again by this instance. */
const claimToken = (claimId: string, jobId: string) => `md5(${claimId} || ':' || ${jobId})::uuid`;

/**
 * Every statement of the outbox, with fully qualified table names. `jsonb` values travel as JSON
 * text (`$n::jsonb`). Statements that write read the clock themselves, so no host time is stored.
 */
export function outboxStatements(schema: string) {
  const jobs = qualifiedTable(schema, OUTBOX_JOBS_TABLE);
  const usage = qualifiedTable(schema, OUTBOX_USAGE_TABLE);
  const epochs = qualifiedTable(schema, MEMORY_ERASURE_EPOCHS_TABLE);

  /**
   * A transition of a running job that holds lease `$2`: the row is locked first and the clock read
   * after the lock is granted, so a completion that waited for a reclaim sees the reclaimed row and
   * today's time; a lost lease (other token, other phase, `now >= lease_until_ms`) writes nothing.
   */
  const fenced = (assignments: string, fence: 'lease' | 'token' = 'lease') => `WITH locked AS MATERIALIZED (SELECT job_id, phase, lease_token, lease_until_ms FROM ${jobs} WHERE job_id = $1::text FOR UPDATE),
      clocked AS MATERIALIZED (SELECT l.*, ${DB_NOW_MS} AS now FROM locked l)
    UPDATE ${jobs} AS t SET ${assignments}, lease_token = NULL, lease_until_ms = 0, updated_at_ms = c.now
    FROM clocked c
    WHERE t.job_id = c.job_id AND c.phase = 'running' AND c.lease_token = $2::uuid${fence === 'lease' ? ' AND c.lease_until_ms > c.now' : ''}
    RETURNING t.app_name, t.user_id, t.job_bytes, t.attempts`;

  /**
   * One claim cycle (spec 07 §6.4). `scanned` is the bounded window: at most `$2` entries after the
   * cursor of the due index and of the lease index (expired running jobs, whose `due_at_ms` equals
   * their lease end), merged in `(due, created_at_ms, job_id)` order. `picked` locks up to `$3` of
   * them whose adapter is registered (`$1`), skipping rows another claimant holds and re-checking
   * each row's phase and due time on its latest version. The result is one row per claimed job,
   * or one row without a job, each carrying the window's size, its last key, and how many expired
   * running jobs in it have no attempt left (those are failed by `failExhausted`, not claimed).
   * Each lease token derives from the claim id `$5` and the job id, so a claim whose answer was
   * lost can still be found and released (`releaseLostClaims`).
   */
  const claim = (withCursor: boolean) => {
    const after = (due: string) => (withCursor ? `AND (${due}, j.created_at_ms, j.job_id) > ($6::bigint, $7::bigint, $8::text)` : '');
    return `WITH clock AS MATERIALIZED (SELECT ${DB_NOW_MS} AS now),
      due AS (
        SELECT j.job_id, j.due_at_ms AS k_due, j.created_at_ms AS k_created, j.adapter_id, j.phase, j.attempts, j.max_attempts FROM ${jobs} AS j
        WHERE j.phase IN ${WAITING} AND j.due_at_ms <= (SELECT now FROM clock) ${after('j.due_at_ms')}
        ORDER BY j.due_at_ms, j.created_at_ms, j.job_id LIMIT $2::integer),
      expired AS (
        SELECT j.job_id, j.lease_until_ms AS k_due, j.created_at_ms AS k_created, j.adapter_id, j.phase, j.attempts, j.max_attempts FROM ${jobs} AS j
        WHERE j.phase = 'running' AND j.lease_until_ms <= (SELECT now FROM clock) ${after('j.lease_until_ms')}
        ORDER BY j.lease_until_ms, j.created_at_ms, j.job_id LIMIT $2::integer),
      scanned AS MATERIALIZED (
        SELECT * FROM (SELECT * FROM due UNION ALL SELECT * FROM expired) AS u ORDER BY k_due, k_created, job_id LIMIT $2::integer),
      picked AS MATERIALIZED (
        SELECT j.job_id, j.phase AS from_phase, s.k_due, s.k_created FROM ${jobs} AS j JOIN scanned AS s ON s.job_id = j.job_id
        WHERE s.adapter_id = ANY ($1::text[]) AND j.attempts < j.max_attempts
          AND ((j.phase IN ${WAITING} AND j.due_at_ms <= (SELECT now FROM clock)) OR (j.phase = 'running' AND j.lease_until_ms <= (SELECT now FROM clock)))
        ORDER BY s.k_due, s.k_created, s.job_id LIMIT $3::integer
        FOR UPDATE OF j SKIP LOCKED),
      claimed AS (
        UPDATE ${jobs} AS t SET phase = 'running', lease_token = ${claimToken('$5::text', 't.job_id')}, lease_until_ms = c.now + $4::bigint,
          due_at_ms = c.now + $4::bigint, attempts = t.attempts + 1, updated_at_ms = c.now
        FROM picked AS p, clock AS c WHERE t.job_id = p.job_id
        RETURNING t.job_id, t.adapter_id, t.app_name, t.user_id, t.epoch, t.attempts, t.max_attempts, t.lease_token::text AS lease_token,
          p.from_phase, p.k_due, p.k_created),
      stats AS (
        SELECT count(*)::integer AS scanned,
          count(*) FILTER (WHERE phase = 'running' AND attempts >= max_attempts AND adapter_id = ANY ($1::text[]))::integer AS exhausted
        FROM scanned),
      last AS (SELECT k_due AS last_due, k_created AS last_created, job_id AS last_job_id FROM scanned ORDER BY k_due DESC, k_created DESC, job_id DESC LIMIT 1)
    SELECT st.scanned, st.exhausted, l.last_due, l.last_created, l.last_job_id, c.*
    FROM stats AS st LEFT JOIN last AS l ON true LEFT JOIN claimed AS c ON true`;
  };

  return Object.freeze({
    epochOf: `SELECT epoch FROM ${epochs} WHERE app_name = $1::text AND user_id = $2::text`,
    jobById: `SELECT job_id, phase, app_name, user_id FROM ${jobs} WHERE job_id = $1::text`,

    // usage rows: the global row is locked first by every transaction that changes usage (outbox-usage.ts)
    lockUsage: `SELECT active_jobs, active_bytes, terminal_jobs FROM ${usage} WHERE usage_key = $1::text FOR UPDATE`,
    ensureUsage: `INSERT INTO ${usage} (usage_key, active_jobs, active_bytes, terminal_jobs, updated_at_ms)
      VALUES ($1::text, 0, 0, 0, ${DB_NOW_MS}) ON CONFLICT (usage_key) DO NOTHING`,
    // an update, not an upsert: Postgres checks the proposed row of an INSERT (negative changes) before the conflict
    applyUsage: `UPDATE ${usage} AS u SET active_jobs = u.active_jobs + d.active_jobs, active_bytes = u.active_bytes + d.active_bytes,
        terminal_jobs = u.terminal_jobs + d.terminal_jobs, updated_at_ms = ${DB_NOW_MS}
      FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::integer[]) AS d(usage_key, active_jobs, active_bytes, terminal_jobs)
      WHERE u.usage_key = d.usage_key RETURNING u.usage_key`,
    ensureUsageRows: `INSERT INTO ${usage} (usage_key, active_jobs, active_bytes, terminal_jobs, updated_at_ms)
      SELECT k, 0, 0, 0, ${DB_NOW_MS} FROM unnest($1::text[]) AS k ON CONFLICT (usage_key) DO NOTHING`,
    dropEmptyScopes: `DELETE FROM ${usage} WHERE usage_key = ANY ($1::text[]) AND usage_key LIKE 'scope:%'
      AND active_jobs = 0 AND active_bytes = 0 AND terminal_jobs = 0`,

    insertJob: `INSERT INTO ${jobs} (job_id, adapter_id, app_name, user_id, epoch, phase, events, event_count, job_bytes, attempts, max_attempts,
        due_at_ms, created_at_ms, updated_at_ms)
      SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, 'pending', $6::jsonb, $7::integer, $8::integer, 0, $9::integer, c.now, c.now, c.now
      FROM (SELECT ${DB_NOW_MS} AS now) AS c
      ON CONFLICT (job_id) DO NOTHING RETURNING job_id`,

    claimFromStart: claim(false),
    claimAfter: claim(true),
    leasedEvents: `SELECT events::text AS events FROM ${jobs} WHERE job_id = $1::text AND lease_token = $2::uuid AND phase = 'running'`,

    complete: fenced(`phase = 'completed', last_error = NULL, finished_at_ms = c.now`),
    /** $3 delay ms, $4 error code */
    retry: fenced(`phase = 'retry_wait', due_at_ms = c.now + $3::bigint, last_error = $4::text`),
    /** $3 'failed' | 'cancelled', $4 error code */
    finish: fenced(`phase = $3::text, last_error = $4::text, finished_at_ms = c.now`),

    /**
     * The same three writes for the reconciler (outbox-leases.ts), fenced on the token alone: a
     * token still in place means no other claimant took the job since, even after its lease ended.
     */
    completeOwned: fenced(`phase = 'completed', last_error = NULL, finished_at_ms = c.now`, 'token'),
    retryOwned: fenced(`phase = 'retry_wait', due_at_ms = c.now + $3::bigint, last_error = $4::text`, 'token'),
    finishOwned: fenced(`phase = $3::text, last_error = $4::text, finished_at_ms = c.now`, 'token'),

    // $1 claim ids whose answer was lost: their jobs go back to retry_wait, due now, the attempt not counted
    releaseLostClaims: `WITH clock AS MATERIALIZED (SELECT ${DB_NOW_MS} AS now),
      lost AS MATERIALIZED (
        SELECT j.job_id FROM ${jobs} AS j
        WHERE j.phase = 'running' AND j.lease_token IN (SELECT ${claimToken('c', 'j.job_id')} FROM unnest($1::text[]) AS c)
        FOR UPDATE OF j)
      UPDATE ${jobs} AS t SET phase = 'retry_wait', lease_token = NULL, lease_until_ms = 0, due_at_ms = k.now, attempts = t.attempts - 1, updated_at_ms = k.now
      FROM lost AS l, clock AS k WHERE t.job_id = l.job_id AND t.phase = 'running'
      RETURNING t.attempts`,

    // running jobs whose lease ended on their last attempt (a crashed or hung delivery): failed, never claimed again
    failExhausted: `WITH clock AS MATERIALIZED (SELECT ${DB_NOW_MS} AS now),
      doomed AS MATERIALIZED (
        SELECT j.job_id FROM ${jobs} AS j
        WHERE j.phase = 'running' AND j.lease_until_ms <= (SELECT now FROM clock) AND j.attempts >= j.max_attempts AND j.adapter_id = ANY ($1::text[])
        ORDER BY j.lease_until_ms LIMIT $2::integer FOR UPDATE OF j SKIP LOCKED)
      UPDATE ${jobs} AS t SET phase = 'failed', lease_token = NULL, lease_until_ms = 0, last_error = 'memory_outbox_lease_expired',
        finished_at_ms = c.now, updated_at_ms = c.now
      FROM doomed AS d, clock AS c WHERE t.job_id = d.job_id
      RETURNING t.app_name, t.user_id, t.job_bytes, t.attempts`,

    // $1 retention ms, $2 batch
    pruneDue: `SELECT EXISTS (SELECT 1 FROM ${jobs} WHERE finished_at_ms IS NOT NULL AND finished_at_ms < ${DB_NOW_MS} - $1::bigint) AS due`,
    prune: `WITH clock AS MATERIALIZED (SELECT ${DB_NOW_MS} AS now),
      doomed AS MATERIALIZED (
        SELECT j.job_id FROM ${jobs} AS j
        WHERE j.finished_at_ms IS NOT NULL AND j.finished_at_ms < (SELECT now FROM clock) - $1::bigint
        ORDER BY j.finished_at_ms, j.job_id LIMIT $2::integer FOR UPDATE OF j SKIP LOCKED),
      deleted AS (DELETE FROM ${jobs} AS t USING doomed AS d WHERE t.job_id = d.job_id AND t.finished_at_ms IS NOT NULL RETURNING t.app_name, t.user_id)
      SELECT app_name, user_id, count(*)::integer AS count FROM deleted GROUP BY app_name, user_id`,

    // $1 app, $2 user, $3 the new epoch: every active job of an older epoch is cancelled
    cancelOlderEpochs: `WITH clock AS MATERIALIZED (SELECT ${DB_NOW_MS} AS now)
      UPDATE ${jobs} AS t SET phase = 'cancelled', lease_token = NULL, lease_until_ms = 0, last_error = 'memory_epoch_fenced',
        finished_at_ms = c.now, updated_at_ms = c.now
      FROM clock AS c
      WHERE t.app_name = $1::text AND t.user_id = $2::text AND t.epoch < $3::bigint AND t.finished_at_ms IS NULL
      RETURNING t.job_bytes`,

    // health (spec 07 §6.5): point and one-row index reads, one sentinel write, the settings
    healthUsage: `SELECT active_jobs, active_bytes, terminal_jobs FROM ${usage} WHERE usage_key = 'global'`,
    healthOldestDue: `SELECT GREATEST(0, ${DB_NOW_MS} - due_at_ms) AS lag FROM ${jobs} WHERE phase IN ${WAITING}
      ORDER BY due_at_ms, created_at_ms, job_id LIMIT 1`,
    healthEpochs: `SELECT 1 AS present FROM ${epochs} LIMIT 1`,
    healthSentinel: `INSERT INTO ${usage} AS u (usage_key, active_jobs, active_bytes, terminal_jobs, updated_at_ms)
      VALUES ('health', 0, 0, 0, ${DB_NOW_MS}) ON CONFLICT (usage_key) DO UPDATE SET updated_at_ms = EXCLUDED.updated_at_ms`,
    healthSettings: `SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('synchronous_standby_names') AS synchronous_standby_names`,
  });
}

/** The statements of one outbox. */
export type OutboxStatements = ReturnType<typeof outboxStatements>;

/**
 * The SQL of the ledger's operations (spec 04 §5–§6), one statement each. A statement that decides
 * takes the row lock first (`FOR UPDATE` in a MATERIALIZED CTE), reads the clock on the locked row,
 * decides in SQL, and writes through a data-modifying CTE on that same row version: a waiting
 * claimant re-reads the committed row (READ COMMITTED), and the decision and the write are one
 * round trip. Internal; exported for the benchmark's raw floor.
 */

import { advisoryLockKeySql } from '../../database/instance-lock';
import { LEDGER_INSTANCE_LOCK_NAMESPACE } from './ledger-instance-key';

/** Verdict column of the deciding statements; `'ok'` means the write happened. */
export type Verdict = 'ok' | 'completed' | 'invocation_owned' | 'lease_expired' | 'stale_owner';

/** The ledger's statements for one (already qualified and quoted) table. */
export interface LedgerStatements {
  /** $1 id, $2 workflow_id, $3 workflow_version, $4 kind, $5 checkpoint json, $6 now|null */
  readonly create: string;
  /** $1 id, $2 token, $3 instance id, $4 now|null, $5 lease ms */
  readonly claim: string;
  /** $1 id, $2 workflow_id, $3 workflow_version, $4 kind, $5 checkpoint json, $6 now|null, $7 token, $8 instance id, $9 lease ms */
  readonly createAndClaim: string;
  /** $1 id, $2 token, $3 now|null, $4 lease ms */
  readonly renew: string;
  /** $1 id, $2 token, $3 now|null, $4 lease ms, $5 checkpoint json */
  readonly checkpoint: string;
  /** $1 id, $2 token, $3 now|null, $4 phase, $5 outcome json|null, $6 checkpoint json|null (keep) */
  readonly finish: string;
  /** $1 id, $2 instance id, $3 now|null */
  readonly delete: string;
  /** $1 id */
  readonly get: string;
  /** $1 limit, $2 now|null */
  readonly listExpired: string;
  /** $1 limit, $2 now|null, $3 outcome json */
  readonly recoverExpired: string;
}

/** Epoch milliseconds: the explicit `now` parameter, else the database clock at evaluation. */
const nowOr = (parameter: string) => `COALESCE(${parameter}::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)`;

/** The advisory-lock key of an instance id: the first 8 bytes (signed) of SHA-256 over the prefixed id. */
const instanceKey = (column: string) => advisoryLockKeySql(LEDGER_INSTANCE_LOCK_NAMESPACE, column);

const recordColumns = (t: string) =>
  `${t}.id, ${t}.workflow_id, ${t}.workflow_version, ${t}.kind, ${t}.checkpoint::text AS checkpoint_json, ${t}.phase, ` +
  `${t}.outcome::text AS outcome_json, ${t}.owner_token IS NOT NULL AS owned, ${t}.owner_instance, ${t}.lease_until_ms, ` +
  `${t}.revision, ${t}.created_at_ms, ${t}.updated_at_ms`;

const OUTPUT_COLUMNS =
  'w.id, w.workflow_id, w.workflow_version, w.kind, w.checkpoint_json, w.phase, w.outcome_json, w.owned, w.owner_instance, ' +
  'w.lease_until_ms, w.revision, w.created_at_ms, w.updated_at_ms';

/** Locks the row, then reads the clock: `clocked` has the row's state and `now`. */
const lockedAndClocked = (table: string, columns: string, nowParameter: string) => `
  locked AS MATERIALIZED (SELECT ${columns} FROM ${table} WHERE id = $1 FOR UPDATE),
  clocked AS MATERIALIZED (SELECT l.*, ${nowOr(nowParameter)} AS now FROM locked l)`;

/**
 * A row running under another instance is claimable before its lease ends only when that owner's
 * session is gone: its instance lock is then free, and the probe lock ends with this transaction.
 * The probe is the shared variant of `pg_try_advisory_xact_lock`: it conflicts with the owner's
 * exclusive session lock only, so claimants probing the same dead owner at once (on other rows) do
 * not mistake one another's probe for a live owner.
 */
const claimableVerdict = (instanceParameter: string) => `CASE
      WHEN c.phase <> 'running' OR c.now >= c.lease_until_ms THEN 'ok'
      WHEN c.owner_instance = ${instanceParameter} THEN 'invocation_owned'
      WHEN pg_try_advisory_xact_lock_shared(${instanceKey('c.owner_instance')}) THEN 'ok'
      ELSE 'invocation_owned' END`;

/** The write fence: running, same token, and `now < lease_until_ms` (equality is expired). */
const FENCE_VERDICT = `CASE
      WHEN c.phase = 'running' AND c.owner_token = $2::uuid THEN CASE WHEN c.now < c.lease_until_ms THEN 'ok' ELSE 'lease_expired' END
      ELSE 'stale_owner' END`;

/**
 * Running rows whose lease has ended on one clock read, oldest lease first, at most $1: a range
 * scan of the `_running_lease_idx` partial index (the clock is an InitPlan, so it bounds the scan).
 */
const expiredRows = (table: string, lock: string) => `
  clock AS MATERIALIZED (SELECT ${nowOr('$2')} AS now),
  expired AS MATERIALIZED (
    SELECT t.id FROM ${table} AS t
    WHERE t.phase = 'running' AND t.lease_until_ms <= (SELECT now FROM clock)
    ORDER BY t.lease_until_ms LIMIT $1${lock})`;

function fenced(table: string, assignments: string): string {
  return `WITH ${lockedAndClocked(table, 'id, phase, owner_token, lease_until_ms', '$3')},
  decided AS MATERIALIZED (SELECT c.id, c.now, ${FENCE_VERDICT} AS verdict FROM clocked c),
  written AS (
    UPDATE ${table} AS t SET ${assignments}, revision = t.revision + 1, updated_at_ms = d.now
    FROM decided d WHERE t.id = d.id AND d.verdict = 'ok'
    RETURNING ${recordColumns('t')})
  SELECT d.verdict, ${OUTPUT_COLUMNS} FROM decided d LEFT JOIN written w ON true`;
}

/** Builds the statements for `table`, a qualified name whose parts are validated identifiers. */
export function ledgerStatements(table: string): LedgerStatements {
  return Object.freeze({
    create: `INSERT INTO ${table} AS t (id, workflow_id, workflow_version, kind, checkpoint, created_at_ms, updated_at_ms)
      SELECT $1, $2, $3, $4, $5::jsonb, c.now, c.now FROM (SELECT ${nowOr('$6')} AS now) c
      ON CONFLICT (id) DO NOTHING
      RETURNING ${recordColumns('t')}`,

    claim: `WITH ${lockedAndClocked(table, 'id, phase, owner_instance, lease_until_ms', '$4')},
  decided AS MATERIALIZED (
    SELECT c.id, c.now, CASE WHEN c.phase = 'completed' THEN 'completed' ELSE ${claimableVerdict('$3')} END AS verdict FROM clocked c),
  written AS (
    UPDATE ${table} AS t SET phase = 'running', outcome = NULL, owner_token = $2::uuid, owner_instance = $3,
      lease_until_ms = d.now + $5::bigint, revision = t.revision + 1, updated_at_ms = d.now
    FROM decided d WHERE t.id = d.id AND d.verdict = 'ok'
    RETURNING ${recordColumns('t')})
  SELECT d.verdict, ${OUTPUT_COLUMNS} FROM decided d LEFT JOIN written w ON true`,

    // one statement, so no outage can leave the row created and unclaimed
    createAndClaim: `INSERT INTO ${table} AS t (id, workflow_id, workflow_version, kind, checkpoint, phase, owner_token, owner_instance,
        lease_until_ms, revision, created_at_ms, updated_at_ms)
      SELECT $1, $2, $3, $4, $5::jsonb, 'running', $7::uuid, $8, c.now + $9::bigint, 1, c.now, c.now FROM (SELECT ${nowOr('$6')} AS now) c
      ON CONFLICT (id) DO NOTHING
      RETURNING ${recordColumns('t')}`,

    renew: fenced(table, 'lease_until_ms = d.now + $4::bigint'),

    checkpoint: fenced(table, 'lease_until_ms = d.now + $4::bigint, checkpoint = $5::jsonb'),

    finish: fenced(
      table,
      'phase = $4, outcome = $5::jsonb, checkpoint = COALESCE($6::jsonb, t.checkpoint), owner_token = NULL, owner_instance = NULL, lease_until_ms = 0',
    ),

    delete: `WITH ${lockedAndClocked(table, 'id, phase, owner_instance, lease_until_ms', '$3')},
  decided AS MATERIALIZED (SELECT c.id, ${claimableVerdict('$2')} AS verdict FROM clocked c),
  removed AS (DELETE FROM ${table} AS t USING decided d WHERE t.id = d.id AND d.verdict = 'ok' RETURNING t.id)
  SELECT d.verdict FROM decided d`,

    get: `SELECT ${recordColumns('t')} FROM ${table} AS t WHERE t.id = $1`,

    listExpired: `WITH ${expiredRows(table, '')}
  SELECT ${recordColumns('t')} FROM expired e JOIN ${table} AS t ON t.id = e.id ORDER BY t.lease_until_ms, t.id`,

    // FOR UPDATE re-checks the condition on the latest committed row version: a lease renewed
    // meanwhile no longer matches, and rows other statements hold are skipped, not waited for
    recoverExpired: `WITH ${expiredRows(table, ' FOR UPDATE OF t SKIP LOCKED')},
  recovered AS (
    UPDATE ${table} AS t SET phase = 'failed', outcome = $3::jsonb, owner_token = NULL, owner_instance = NULL, lease_until_ms = 0,
      revision = t.revision + 1, updated_at_ms = (SELECT now FROM clock)
    FROM expired e WHERE t.id = e.id
    RETURNING t.id)
  SELECT id FROM recovered ORDER BY id`,
  });
}


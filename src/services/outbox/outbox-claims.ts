import { randomUUID } from 'node:crypto';
import { frozenJsonParse } from '../../json/json-copy';
import type { SessionEvent } from '../../runner/session.types';
import type { MemoryScope } from '../services.types';
import type { OutboxJobPhase } from './outbox.schema';
import { rowNumber, type OutboxContext } from './outbox-context';
import { lockUsage, UsageChanges } from './outbox-usage';

/** A position in the claim order `(due, created_at_ms, job_id)`: where the next scan starts after. */
export interface ClaimCursor {
  readonly due: number;
  readonly created: number;
  readonly jobId: string;
}

/** A job this instance holds the lease of. */
export interface ClaimedJob {
  readonly jobId: string;
  readonly adapterId: string;
  readonly scope: MemoryScope;
  readonly epoch: number;
  /** Attempts counted so far, this one included. */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseToken: string;
  readonly from: OutboxJobPhase;
}

/** What one claim cycle did. */
export interface ClaimCycle {
  readonly claimed: readonly ClaimedJob[];
  /** Where the next cycle starts: `null` wraps to the start of the order. */
  readonly cursor: ClaimCursor | null;
  /** Expired running jobs in the window without an attempt left (for {@link failExhausted}). */
  readonly exhausted: number;
}

/**
 * One claim cycle (spec 07 §6.4): in one statement, examines at most `maxClaimScan` due entries
 * after `cursor` (due pending/retry_wait jobs and running jobs whose lease ended, by the database
 * clock), and claims up to `free` of them whose adapter is in `adapters`, `FOR UPDATE SKIP LOCKED`:
 * each becomes `running` with a new `lease_token`, `lease_until_ms = now + leaseMs` and
 * `attempts + 1`. The next cursor is the last job claimed when `free` were claimed, the end of the
 * window when the scan was cut at `maxClaimScan`, and the start (`null`) when the scan reached the
 * end of the due jobs: the cursor continues and wraps, so no due job starves behind others. The
 * lease tokens derive from `claimId`, so a claim that failed without an answer can be released
 * with {@link releaseLostClaims}.
 */
export async function claimJobs(context: OutboxContext, adapters: readonly string[], free: number, cursor: ClaimCursor | null, claimId: string = randomUUID()): Promise<ClaimCycle> {
  const { maxClaimScan, leaseMs } = context.options;
  const rows = await context.run(async (client, sql) => {
    const base = [adapters, maxClaimScan, free, leaseMs, claimId];
    const values = cursor === null ? base : [...base, cursor.due, cursor.created, cursor.jobId];
    return (await client.query(cursor === null ? sql.claimFromStart : sql.claimAfter, values)).rows;
  });
  const first = rows[0] ?? {};
  const claimedRows = rows.filter((row) => row.job_id !== null && row.job_id !== undefined);
  const claimed = claimedRows
    .map((row) => ({ row, key: { due: rowNumber(row.k_due), created: rowNumber(row.k_created), jobId: row.job_id as string } }))
    .sort((a, b) => compareKeys(a.key, b.key));
  const jobs = claimed.map(({ row }): ClaimedJob =>
    Object.freeze({
      jobId: row.job_id as string,
      adapterId: row.adapter_id as string,
      scope: Object.freeze({ appName: row.app_name as string, userId: row.user_id as string }),
      epoch: rowNumber(row.epoch),
      attempts: rowNumber(row.attempts),
      maxAttempts: rowNumber(row.max_attempts),
      leaseToken: row.lease_token as string,
      from: row.from_phase as OutboxJobPhase,
    }),
  );
  for (const job of jobs) context.transition(job.from, 'running', job.attempts);
  const scanned = rowNumber(first.scanned ?? 0);
  let next: ClaimCursor | null = null;
  if (jobs.length >= free && claimed.length > 0) next = claimed[claimed.length - 1].key;
  else if (scanned >= maxClaimScan && first.last_job_id != null) next = { due: rowNumber(first.last_due), created: rowNumber(first.last_created), jobId: first.last_job_id as string };
  return { claimed: jobs, cursor: next, exhausted: rowNumber(first.exhausted ?? 0) };
}

/**
 * Fails running jobs of `adapters` whose lease ended on their last attempt (`last_error`
 * `memory_outbox_lease_expired`), at most `maxClaimScan`, with usage in the same transaction.
 * Returns how many.
 */
export async function failExhausted(context: OutboxContext, adapters: readonly string[]): Promise<number> {
  const failed = await context.run(async (client, sql) => {
    await lockUsage(client, sql, null);
    const { rows } = await client.query(sql.failExhausted, [adapters, context.options.maxClaimScan]);
    const changes = new UsageChanges();
    for (const row of rows) changes.finished({ appName: row.app_name as string, userId: row.user_id as string }, rowNumber(row.job_bytes));
    await changes.apply(client, sql);
    return rows.map((row) => rowNumber(row.attempts));
  });
  for (const attempts of failed) context.transition('running', 'failed', attempts, 'memory_outbox_lease_expired');
  return failed.length;
}

function compareKeys(a: ClaimCursor, b: ClaimCursor): number {
  if (a.due !== b.due) return a.due - b.due;
  if (a.created !== b.created) return a.created - b.created;
  // the job_id column is COLLATE "C": bytewise, which code-point order of UTF-8 matches
  return Buffer.compare(Buffer.from(a.jobId, 'utf8'), Buffer.from(b.jobId, 'utf8'));
}

/**
 * The events of a job this instance still leases, read as stored (deep-frozen); `null` when the
 * lease is already gone (another instance reclaimed the job, or an erasure cancelled it).
 */
export async function leasedEvents(context: OutboxContext, job: ClaimedJob): Promise<readonly SessionEvent[] | null> {
  const [row] = await context.run(async (client, sql) => (await client.query(sql.leasedEvents, [job.jobId, job.leaseToken])).rows);
  return row === undefined ? null : (frozenJsonParse(row.events as string) as readonly SessionEvent[]);
}

/**
 * Releases the jobs claims `claimIds` may have committed although their answer was lost (the
 * connection failed during the claim): `running` under a token of one of them → `retry_wait`, due
 * now, the attempt not counted. Returns how many.
 */
export async function releaseLostClaims(context: OutboxContext, claimIds: readonly string[]): Promise<number> {
  const rows = await context.run(async (client, sql) => (await client.query(sql.releaseLostClaims, [claimIds])).rows);
  for (const row of rows) context.transition('running', 'retry_wait', rowNumber(row.attempts), 'memory_outbox_claim_lost');
  return rows.length;
}

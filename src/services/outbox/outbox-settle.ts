import type { OutboxJobPhase } from './outbox.schema';
import type { ClaimedJob } from './outbox-claims';
import { rowNumber, type OutboxContext } from './outbox-context';
import { retryDelayMs } from './outbox-retry';
import { lockUsage, scopeUsageKey, UsageChanges } from './outbox-usage';

/**
 * What a settle is fenced on: `lease` (spec 07 §6.4: token, phase and an unexpired lease) for the
 * delivery that holds it; `token` (token and phase) for the reconciler of this instance's own
 * leases, whose token still in place proves no other claimant took the job.
 */
export type SettleFence = 'lease' | 'token';

/**
 * Records a delivered job as `completed`, fenced on its lease (spec 07 §6.4): the update commits only
 * while the job is `running` under `job.leaseToken` and `lease_until_ms > now`, with usage in the
 * same transaction. False when the lease was lost: the result is discarded and nothing is written.
 */
export async function completeJob(context: OutboxContext, job: ClaimedJob, fence: SettleFence = 'lease'): Promise<boolean> {
  const done = await context.run(async (client, sql) => {
    await lockUsage(client, sql, scopeUsageKey(job.scope));
    const { rows } = await client.query(fence === 'lease' ? sql.complete : sql.completeOwned, [job.jobId, job.leaseToken]);
    if (rows.length === 0) return false;
    const changes = new UsageChanges();
    changes.finished(job.scope, rowNumber(rows[0].job_bytes));
    await changes.apply(client, sql);
    return true;
  });
  if (done) context.transition('running', 'completed', job.attempts);
  return done;
}

/**
 * Records a failed delivery with error `code`, fenced as {@link completeJob}: `memory_epoch_fenced`
 * → `cancelled` (never retried); with attempts left → `retry_wait`, due after {@link retryDelayMs}
 * by the database clock; else `failed`. `last_error` is the code. Returns the phase written, or
 * `null` when the lease was lost.
 */
export async function failJob(context: OutboxContext, job: ClaimedJob, code: string, fence: SettleFence = 'lease'): Promise<OutboxJobPhase | null> {
  const to: OutboxJobPhase = code === 'memory_epoch_fenced' ? 'cancelled' : job.attempts < job.maxAttempts ? 'retry_wait' : 'failed';
  const delay = to === 'retry_wait' ? retryDelayMs(job.attempts, context.options, context.random) : 0;
  const written = await context.run(async (client, sql) => {
    if (to === 'retry_wait') {
      return (await client.query(fence === 'lease' ? sql.retry : sql.retryOwned, [job.jobId, job.leaseToken, delay, code])).rows.length > 0;
    }
    await lockUsage(client, sql, scopeUsageKey(job.scope));
    const { rows } = await client.query(fence === 'lease' ? sql.finish : sql.finishOwned, [job.jobId, job.leaseToken, to, code]);
    if (rows.length === 0) return false;
    const changes = new UsageChanges();
    changes.finished(job.scope, rowNumber(rows[0].job_bytes));
    await changes.apply(client, sql);
    return true;
  });
  if (!written) return null;
  context.transition('running', to, job.attempts, code);
  return to;
}

import { rowNumber, type OutboxContext } from './outbox-context';
import { lockUsage, UsageChanges } from './outbox-usage';

/**
 * One prune batch (spec 07 §6.5): deletes at most `maxPruneBatch` terminal jobs finished more than
 * `terminalRetentionMs` ago by the database clock, in `(finished_at_ms, job_id)` order, and lowers
 * `terminal_jobs` in the same transaction. A one-row index probe comes first, so a cycle with
 * nothing to prune never takes the global usage lock. Returns the number deleted.
 */
export async function pruneOnce(context: OutboxContext): Promise<number> {
  const { terminalRetentionMs, maxPruneBatch } = context.options;
  const due = await context.run(async (client, sql) => (await client.query(sql.pruneDue, [terminalRetentionMs])).rows[0]?.due === true);
  if (!due) return 0;
  return context.run(async (client, sql) => {
    await lockUsage(client, sql, null);
    const { rows } = await client.query(sql.prune, [terminalRetentionMs, maxPruneBatch]);
    const changes = new UsageChanges();
    let deleted = 0;
    for (const row of rows) {
      const count = rowNumber(row.count);
      deleted += count;
      changes.add({ appName: row.app_name as string, userId: row.user_id as string }, { terminalJobs: -count });
    }
    await changes.apply(client, sql);
    return deleted;
  });
}

import type { TransactionClient } from '../../database/transaction-runner';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkMemoryScope } from '../service-scope';
import type { MemoryScope } from '../services.types';
import { rowNumber, type OutboxContext } from './outbox-context';
import { lockUsage, scopeUsageKey, UsageChanges } from './outbox-usage';

/**
 * The outbox's part of `eraseMemory` (spec 07 §6.5), run on the caller's `client` inside the
 * transaction that raises the scope's epoch to `epoch`: every active job of the scope with an older
 * epoch becomes `cancelled` (`last_error` `memory_epoch_fenced`) and usage is adjusted, under the
 * global and then the scope usage lock. A running job's delivery then fails its completion fence.
 * Returns the number of jobs cancelled; nothing is committed here and no telemetry is emitted (the
 * caller's transaction may still roll back).
 */
export async function cancelOlderEpochJobs(context: OutboxContext, client: TransactionClient, scope: MemoryScope, epoch: number): Promise<number> {
  const checked = checkMemoryScope(scope);
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new RuntimeServiceError('invalid_memory_request', { field: 'epoch' });
  const sql = await context.statements(client);
  await lockUsage(client, sql, scopeUsageKey(checked));
  const { rows } = await client.query(sql.cancelOlderEpochs, [checked.appName, checked.userId, epoch]);
  const changes = new UsageChanges();
  for (const row of rows) changes.finished(checked, rowNumber(row.job_bytes));
  await changes.apply(client, sql);
  return rows.length;
}

import type { TransactionClient } from '../../database/transaction-runner';
import { EvalServiceError } from '../eval.errors';
import type { EvalJobRecord, EvalPhase, EvalScope, EvalTransitionFields } from '../eval.types';
import { checkEvalScope } from '../eval-scope';
import { jobRecord, rowNumber } from './eval-records';
import { jobIdOrNotFound, transitionArguments, type TransitionArguments } from './eval-store-arguments';
import type { EvalStoreContext } from './eval-store-context';
import type { EvalStoreStatements } from './eval-store-sql';
import { lockUsage, UsageChanges } from './eval-store-usage';

/**
 * The compare-and-set of spec 05 §5, one transaction: the UPDATE changes the row only when its
 * phase is expected and the move legal; when it changes nothing, a read of the row classifies the
 * failure (`not_found`, `stale_phase` `{expected, actual}`, `invalid_eval_job_transition`
 * `{from, to}`). `running` sets `started_at_ms`, a terminal phase `finished_at_ms`; a `completed`
 * result is stored and its bytes counted into `record_bytes` and usage, under the caps
 * (`eval_record_too_large`, `eval_scope_bytes_exceeded`, `eval_store_bytes_exceeded`).
 */
export async function transitionJob(
  context: EvalStoreContext,
  scope: EvalScope,
  jobId: string,
  expected: readonly EvalPhase[],
  to: EvalPhase,
  fields?: EvalTransitionFields,
): Promise<EvalJobRecord> {
  const { app } = checkEvalScope(scope);
  const id = jobIdOrNotFound(jobId);
  const settings = context.settings;
  const move = transitionArguments(expected, to, fields, settings.maxRecordBytes);
  return context.run(async (client, sql) => {
    const now = context.now();
    // only a result changes usage; its transaction takes the usage locks first, as every usage writer does
    const usage = move.result === null ? null : await lockUsage(client, sql, app, now);
    const [row] = (
      await client.query(sql.transition, [id, app, move.to, move.expected, move.legalSources, now, move.reason, move.result?.text ?? null, move.result?.bytes ?? 0])
    ).rows;
    if (row === undefined) throw await classifyRefusal(client, sql, id, app, move);
    const record = jobRecord(row);
    if (usage !== null && move.result !== null) {
      const bytes = move.result.bytes;
      if (record.record_bytes > settings.maxRecordBytes) throw new EvalServiceError('eval_record_too_large', { limit: settings.maxRecordBytes });
      if (usage.app.bytes + bytes > settings.maxScopeBytes) throw new EvalServiceError('eval_scope_bytes_exceeded', { limit: settings.maxScopeBytes });
      if (usage.global.bytes + bytes > settings.maxTotalBytes) throw new EvalServiceError('eval_store_bytes_exceeded', { limit: settings.maxTotalBytes });
      const changes = new UsageChanges();
      changes.add(app, { bytes });
      await changes.apply(client, sql, now);
    }
    return record;
  });
}

/** Why the UPDATE changed nothing; the UPDATE was the authority, this read only names the reason. */
async function classifyRefusal(client: TransactionClient, sql: EvalStoreStatements, id: string, app: string, move: TransitionArguments): Promise<EvalServiceError> {
  const [row] = (await client.query(sql.jobPhase, [id, app])).rows;
  if (row === undefined) return new EvalServiceError('not_found');
  const actual = row.phase as EvalPhase;
  if (!move.expected.includes(actual)) return new EvalServiceError('stale_phase', { expected: [...move.expected], actual });
  return new EvalServiceError('invalid_eval_job_transition', { from: actual, to: move.to });
}

/**
 * Recovery (spec 05 §3): one statement fails every `queued` and `running` job with reason
 * `evaluation_service_restarted`, revision + 1, `finished_at_ms` and `updated_at_ms` now. Returns
 * the number of rows.
 */
export async function recoverJobs(context: EvalStoreContext): Promise<number> {
  return context.run(async (client, sql) => {
    const [row] = (await client.query(sql.recover, [context.now()])).rows;
    return rowNumber(row.count);
  });
}

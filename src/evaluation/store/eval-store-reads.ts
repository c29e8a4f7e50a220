import { EvalServiceError } from '../eval.errors';
import type { EvalJobRecord, EvalPage, EvalResult, EvalScope, EvalSetRevision, EvalSetSummary } from '../eval.types';
import { checkEvalScope, EVAL_JOB_ID } from '../eval-scope';
import { decodeEvalCursor, encodeEvalCursor, isKeyInteger, isKeyText, type CursorPart } from './eval-cursor';
import { jobRecord, resultOf, setRevision, setSummary, type EvalRow } from './eval-records';
import { jobIdOrNotFound, keyOrNotFound, MAX_EVAL_KEY_BYTES, MAX_EVAL_VERSION_BYTES, pageArguments } from './eval-store-arguments';
import type { EvalStoreContext } from './eval-store-context';

/** The job `jobId` of the scope's app; another app's job, like an absent one, is `not_found`. */
export async function getJob(context: EvalStoreContext, scope: EvalScope, jobId: string): Promise<EvalJobRecord> {
  const { app } = checkEvalScope(scope);
  const id = jobIdOrNotFound(jobId);
  return context.run(async (client, sql) => {
    const [row] = (await client.query(sql.getJob, [id, app])).rows;
    if (row === undefined) throw new EvalServiceError('not_found');
    return jobRecord(row);
  });
}

/** The job and its result (`null` unless `completed`). */
export async function getResult(context: EvalStoreContext, scope: EvalScope, jobId: string): Promise<{ readonly job: EvalJobRecord; readonly result: EvalResult | null }> {
  const { app } = checkEvalScope(scope);
  const id = jobIdOrNotFound(jobId);
  return context.run(async (client, sql) => {
    const [row] = (await client.query(sql.getResult, [id, app])).rows;
    if (row === undefined) throw new EvalServiceError('not_found');
    return Object.freeze({ job: jobRecord(row), result: resultOf(row) });
  });
}

/** The app's jobs by `(created_at_ms, job_id)`, oldest first; the cursor is `[created_at_ms, job_id]` of the last one. */
export async function listJobs(context: EvalStoreContext, scope: EvalScope, options: unknown): Promise<EvalPage<EvalJobRecord>> {
  const { app } = checkEvalScope(scope);
  const { limit, cursor } = pageArguments(options, context.settings);
  const after =
    cursor === undefined
      ? null
      : decodeEvalCursor(cursor, (parts) => (parts.length === 2 && isKeyInteger(parts[0]) && typeof parts[1] === 'string' && EVAL_JOB_ID.test(parts[1]) ? parts : null));
  return context.run(async (client, sql) => {
    const rows = after === null ? (await client.query(sql.listJobs, [app, limit + 1])).rows : (await client.query(sql.listJobsAfter, [app, limit + 1, ...after])).rows;
    return page(rows, limit, jobRecord, (job) => [job.created_at_ms, job.job_id]);
  });
}

/** The set revision `(evalSetId, version)` of the scope's app, with its content. */
export async function getSet(context: EvalStoreContext, scope: EvalScope, evalSetId: string, version: string): Promise<EvalSetRevision> {
  const { app } = checkEvalScope(scope);
  const id = keyOrNotFound(evalSetId);
  const setVersion = keyOrNotFound(version, MAX_EVAL_VERSION_BYTES);
  return context.run(async (client, sql) => {
    const [row] = (await client.query(sql.getSet, [app, id, setVersion])).rows;
    if (row === undefined) throw new EvalServiceError('not_found');
    return setRevision(row);
  });
}

/** The app's set revisions by `(eval_set_id, eval_set_version)` (bytewise); the cursor is `[id, version]` of the last one. */
export async function listSets(context: EvalStoreContext, scope: EvalScope, options: unknown): Promise<EvalPage<EvalSetSummary>> {
  const { app } = checkEvalScope(scope);
  const { limit, cursor } = pageArguments(options, context.settings);
  const after =
    cursor === undefined
      ? null
      : decodeEvalCursor(cursor, (parts) => (parts.length === 2 && isKeyText(parts[0], MAX_EVAL_KEY_BYTES) && isKeyText(parts[1], MAX_EVAL_VERSION_BYTES) ? parts : null));
  return context.run(async (client, sql) => {
    const rows = after === null ? (await client.query(sql.listSets, [app, limit + 1])).rows : (await client.query(sql.listSetsAfter, [app, limit + 1, ...after])).rows;
    return page(rows, limit, setSummary, (set) => [set.eval_set_id, set.eval_set_version]);
  });
}

/** A page of `limit` items out of `limit + 1` rows read: the extra row only says that more follow. */
function page<T>(rows: readonly EvalRow[], limit: number, record: (row: EvalRow) => T, key: (item: T) => CursorPart[]): EvalPage<T> {
  const items = rows.slice(0, limit).map(record);
  const hasMore = rows.length > limit;
  return Object.freeze({ items: Object.freeze(items), next_cursor: hasMore ? encodeEvalCursor(key(items[items.length - 1])) : null, has_more: hasMore });
}

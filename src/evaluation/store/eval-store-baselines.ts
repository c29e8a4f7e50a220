import { readOwnData } from '../../shared/options/option-reader';
import { EvalServiceError } from '../eval.errors';
import type { EvalBaselineRecord, EvalBaselineWithResult, EvalScope } from '../eval.types';
import { checkEvalScope } from '../eval-scope';
import { baselineRecord, resultOf } from './eval-records';
import { invalidArgument, jobIdOrNotFound, keyOrNotFound, keyToWrite } from './eval-store-arguments';
import type { EvalStoreContext } from './eval-store-context';
import { lockUsage, UsageChanges } from './eval-store-usage';

/** What `putBaseline` names: the set, the baseline's name and the job. */
export interface BaselineTarget {
  readonly evalSetId: string;
  readonly name: string;
  readonly jobId: string;
}

/**
 * `putBaseline` (spec 05 §6): upserts the baseline `(evalSetId, name)` of the scope's app to point at
 * `jobId`. The job must exist in the app and belong to that set (else `not_found`) and be
 * `completed` (else `eval_job_not_completed`); a new baseline beyond `maxBaselines` is
 * `eval_baseline_capacity_reached`. `created_at_ms` is kept by an update.
 */
export async function putBaseline(context: EvalStoreContext, scope: EvalScope, baseline: BaselineTarget): Promise<EvalBaselineRecord> {
  const { app } = checkEvalScope(scope);
  const own = readOwnData(baseline, ['evalSetId', 'name', 'jobId']);
  if (own === null || own.unknown.length > 0 || own.accessors.length > 0) throw invalidArgument('baseline');
  const evalSetId = keyToWrite(own.values.evalSetId, 'evalSetId');
  const name = keyToWrite(own.values.name, 'name');
  const jobId = jobIdOrNotFound(own.values.jobId);
  const settings = context.settings;
  return context.run(async (client, sql) => {
    const now = context.now();
    const usage = await lockUsage(client, sql, app, now);
    const [job] = (await client.query(sql.baselineJob, [jobId, app])).rows;
    if (job === undefined || job.eval_set_id !== evalSetId) throw new EvalServiceError('not_found');
    if (job.phase !== 'completed') throw new EvalServiceError('eval_job_not_completed');
    const exists = (await client.query(sql.baselineExists, [app, evalSetId, name])).rows.length > 0;
    if (!exists && usage.global.baselines + 1 > settings.maxBaselines) throw new EvalServiceError('eval_baseline_capacity_reached', { limit: settings.maxBaselines });
    const [row] = (await client.query(sql.upsertBaseline, [app, evalSetId, name, jobId, now])).rows;
    if (!exists) {
      const changes = new UsageChanges();
      changes.add(app, { baselines: 1 });
      await changes.apply(client, sql, now);
    }
    return baselineRecord(row);
  });
}

/** The baseline `(evalSetId, name)` of the scope's app with its job's result; `not_found` when absent. */
export async function getBaseline(context: EvalStoreContext, scope: EvalScope, evalSetId: string, name: string): Promise<EvalBaselineWithResult> {
  const { app } = checkEvalScope(scope);
  const id = keyOrNotFound(evalSetId);
  const baselineName = keyOrNotFound(name);
  return context.run(async (client, sql) => {
    const [row] = (await client.query(sql.getBaseline, [app, id, baselineName])).rows;
    const result = row === undefined ? null : resultOf(row);
    // a baseline's job is completed, and a completed job has its result: both are kept by the writes
    if (result === null) throw new EvalServiceError('not_found');
    return Object.freeze({ ...baselineRecord(row), result });
  });
}

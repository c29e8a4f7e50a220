import { readOptions } from '../../shared/options/option-reader';
import { EvalServiceError } from '../eval.errors';
import type { EvalScope, EvalStore } from '../eval.types';
import { evalOptionFailure } from '../eval-option-failure';
import { checkEvalJobId } from '../eval-scope';
import { compareResults, type EvalRegressionReport } from '../executor/regression-report';
import { completedResult } from './completed-result';

/** Options of {@link EvalService.compare}. */
export interface EvalCompareOptions {
  readonly evalSetId: string;
  /** Name of the baseline of that set. */
  readonly baseline: string;
  /** How far a metric may drop below the baseline before it counts as a regression, 0..1. @default 0 */
  readonly tolerance?: number;
}

const isName = (value: unknown): boolean => typeof value === 'string' && value.length > 0;

const COMPARE_RULES = {
  evalSetId: isName,
  baseline: isName,
  tolerance: (value: unknown) => typeof value === 'number' && value >= 0 && value <= 1,
};

/**
 * The regression gate of a service: the completed job `jobId` of `scope` against the named baseline of
 * the same set (`not_found` when either is absent or the job is of another set). Bad options are
 * `invalid_eval_compare_options` naming every unknown key (`{field}` or `{fields}`), else the first
 * bad option, else a missing `evalSetId` or `baseline` (`{field}`).
 */
export async function compareWithBaseline(store: EvalStore, scope: EvalScope, jobId: string, options: unknown): Promise<EvalRegressionReport> {
  const { evalSetId, baseline, tolerance } = readCompareOptions(options);
  const base = await store.getBaseline(scope, evalSetId, baseline);
  const candidate = await store.getResult(scope, checkEvalJobId(jobId));
  if (candidate.job.eval_set_id !== evalSetId) throw new EvalServiceError('not_found');
  return compareResults({ job_id: base.job_id, result: base.result }, { job_id: jobId, result: completedResult(candidate) }, { tolerance });
}

function readCompareOptions(options: unknown): { evalSetId: string; baseline: string; tolerance: number } {
  const read = readOptions(options, COMPARE_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw evalOptionFailure(read, 'invalid_eval_compare_options');
  const { evalSetId, baseline, tolerance } = read.values;
  if (evalSetId === undefined) throw new EvalServiceError('invalid_eval_compare_options', { field: 'evalSetId' });
  if (baseline === undefined) throw new EvalServiceError('invalid_eval_compare_options', { field: 'baseline' });
  return { evalSetId: evalSetId as string, baseline: baseline as string, tolerance: (tolerance as number | undefined) ?? 0 };
}

import { deepFreeze } from '../../json';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isPlainObject } from '../../shared/options/plain-object';
import { EvalServiceError } from '../eval.errors';
import type { EvalCaseResult, EvalMetricResult, EvalResult } from '../eval.types';

/** One side of a comparison: a completed job and its result. */
export interface EvalComparedJob {
  readonly job_id: string;
  readonly result: EvalResult;
}

/** Options of {@link compareResults}. */
export interface CompareResultsOptions {
  /** How far (0..1) a metric's score may fall below the baseline's before it counts as regressed. @default 0 */
  readonly tolerance?: number;
}

/** One metric in a regression report; a score is `null` on the side the metric is missing from. */
export interface EvalRegressionMetric {
  readonly baseline_score: number | null;
  readonly candidate_score: number | null;
  /** `candidate_score − baseline_score`, `null` unless both are present. */
  readonly delta: number | null;
  /** The candidate's threshold (the baseline's when the candidate lacks the metric). */
  readonly threshold: number;
  /** The candidate's score reaches its threshold (`false` when the candidate lacks the metric). */
  readonly passed: boolean;
  readonly regressed: boolean;
}

/** A baseline case that reached a metric's threshold and no longer does in the candidate. */
export interface EvalRegressionCase {
  readonly case_id: string;
  /** The metrics it reached in the baseline and misses in the candidate, in the baseline's metric order. */
  readonly regressed_metrics: readonly string[];
}

/** The content-free verdict of a candidate against a baseline: scores, ids and metric names only. */
export interface EvalRegressionReport {
  readonly schema_version: 1;
  /** True when any metric regressed. */
  readonly regressed: boolean;
  readonly tolerance: number;
  readonly baseline_job_id: string;
  readonly candidate_job_id: string;
  readonly metrics: Readonly<Record<string, EvalRegressionMetric>>;
  /** Only the baseline cases that regressed, in baseline order. */
  readonly cases: readonly EvalRegressionCase[];
}

/** Means of many case scores carry rounding error; a difference this small is not a regression. */
const ROUNDING_SLACK = 1e-9;

const isTolerance = (value: unknown): boolean => typeof value === 'number' && value >= 0 && value <= 1;

/**
 * Compares a candidate job's result with a baseline's, metric by metric (by name) and case by case
 * (by `case_id`). A metric regressed when the candidate's score is below its threshold, or more than
 * `tolerance` below the baseline's score, or when the candidate lacks a metric the baseline has; a
 * metric only the candidate has regresses only by its threshold. A case is listed when some metric
 * reached its threshold in the baseline case (which had no error) and does not in the candidate case:
 * because its score is lower, it ended with an error, or the case or the metric is missing. The report
 * never holds outputs, tool arguments or errors of either job. Throws `invalid_eval_compare_options`
 * (`{field}`: `baseline`, `candidate`, `tolerance` or an unknown option) for bad arguments.
 *
 * @example
 * const report = compareResults({ job_id: baselineId, result: baseline }, { job_id: candidateId, result }, { tolerance: 0.05 });
 * if (report.regressed) console.log(Object.keys(report.metrics).filter((name) => report.metrics[name].regressed));
 */
export function compareResults(baseline: EvalComparedJob, candidate: EvalComparedJob, options?: CompareResultsOptions): EvalRegressionReport {
  const read = readOptions(options, { tolerance: isTolerance }, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new EvalServiceError('invalid_eval_compare_options', optionFailureDetails(read.fields));
  checkJob(baseline, 'baseline');
  checkJob(candidate, 'candidate');
  const tolerance = (read.values.tolerance as number | undefined) ?? 0;
  const base = baseline.result;
  const next = candidate.result;
  const names = [...new Set([...Object.keys(base.metrics), ...Object.keys(next.metrics)])];
  const metrics = names.map((name) => [name, metricVerdict(ownMetric(base, name), ownMetric(next, name), tolerance)] as const);
  return deepFreeze({
    schema_version: 1,
    regressed: metrics.some(([, verdict]) => verdict.regressed),
    tolerance,
    baseline_job_id: baseline.job_id,
    candidate_job_id: candidate.job_id,
    metrics: Object.fromEntries(metrics),
    cases: regressedCases(base, next),
  });
}

function metricVerdict(base: EvalMetricResult | undefined, next: EvalMetricResult | undefined, tolerance: number): EvalRegressionMetric {
  const belowThreshold = next !== undefined && next.score < next.threshold;
  const fell = base !== undefined && next !== undefined && base.score - next.score > tolerance + ROUNDING_SLACK;
  return {
    baseline_score: base?.score ?? null,
    candidate_score: next?.score ?? null,
    delta: base !== undefined && next !== undefined ? next.score - base.score : null,
    threshold: (next ?? (base as EvalMetricResult)).threshold,
    passed: next !== undefined && next.score >= next.threshold,
    regressed: next === undefined || belowThreshold || fell,
  };
}

function regressedCases(base: EvalResult, next: EvalResult): EvalRegressionCase[] {
  const candidates = new Map<string, EvalCaseResult>();
  for (const result of next.cases) if (!candidates.has(result.case_id)) candidates.set(result.case_id, result);
  const names = Object.keys(base.metrics);
  const regressed: EvalRegressionCase[] = [];
  for (const baseCase of base.cases) {
    const nextCase = candidates.get(baseCase.case_id);
    const lost = names.filter((name) => reached(baseCase, ownMetric(base, name), name) && !reached(nextCase, ownMetric(next, name), name));
    if (lost.length > 0) regressed.push({ case_id: baseCase.case_id, regressed_metrics: lost });
  }
  return regressed;
}

function reached(result: EvalCaseResult | undefined, metric: EvalMetricResult | undefined, name: string): boolean {
  if (result === undefined || metric === undefined || result.error !== null) return false;
  const score = Object.hasOwn(result.scores, name) ? result.scores[name] : null;
  return typeof score === 'number' && score >= metric.threshold;
}

function ownMetric(result: EvalResult, name: string): EvalMetricResult | undefined {
  return Object.hasOwn(result.metrics, name) ? result.metrics[name] : undefined;
}

/** Enough of the shape to compare without throwing midway; results come from the store, built by the executor. */
function checkJob(job: EvalComparedJob, field: 'baseline' | 'candidate'): void {
  const result = isPlainObject(job) && typeof job.job_id === 'string' ? (job.result as unknown) : undefined;
  if (!isPlainObject(result) || !isPlainObject(result.metrics) || !Array.isArray(result.cases)) throw invalid(field);
  for (const metric of Object.values(result.metrics)) {
    if (!isPlainObject(metric) || !Number.isFinite(metric.score) || !Number.isFinite(metric.threshold)) throw invalid(field);
  }
  for (const item of result.cases as unknown[]) {
    if (!isPlainObject(item) || typeof item.case_id !== 'string' || !isPlainObject(item.scores) || (item.error !== null && typeof item.error !== 'string')) throw invalid(field);
  }
}

function invalid(field: string): EvalServiceError {
  return new EvalServiceError('invalid_eval_compare_options', { field });
}

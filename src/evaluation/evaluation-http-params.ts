import { optionFailureDetails, readOwnData } from '../shared/options/option-reader';
import { EvalServiceError } from './eval.errors';
import type { EvalPageOptions } from './eval.types';

const DIGITS = /^\d{1,9}$/;
const DECIMAL = /^(?:0|1|0?\.\d{1,6}|1\.0{1,6})$/;

/** A query string as Express parses it: strings, or arrays for a repeated parameter. */
export type EvalQueryParams = Readonly<Record<string, unknown>>;

function single(params: EvalQueryParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new EvalServiceError('invalid_eval_request', { field: name });
  return value;
}

/** `limit` (decimal digits) and `cursor` of `GET /evaluations`; a repeated parameter is refused. */
export function pageOptionsOf(params: EvalQueryParams): EvalPageOptions {
  const limit = single(params, 'limit');
  const cursor = single(params, 'cursor');
  if (limit !== undefined && !DIGITS.test(limit)) throw new EvalServiceError('invalid_eval_request', { field: 'limit' });
  return { ...(limit === undefined ? {} : { limit: Number(limit) }), ...(cursor === undefined ? {} : { cursor }) };
}

/** `baseline` (required) and `tolerance` (0..1) of the compare route. */
export function compareParamsOf(params: EvalQueryParams): { baseline: string; tolerance?: number } {
  const baseline = single(params, 'baseline');
  const tolerance = single(params, 'tolerance');
  if (baseline === undefined) throw new EvalServiceError('invalid_eval_compare_options', { field: 'baseline' });
  return { baseline, ...(tolerance === undefined ? {} : { tolerance: toleranceOf(tolerance) }) };
}

/** A tolerance written as a plain decimal in 0..1 (`0.05`, `1`); else `invalid_eval_compare_options`. */
export function toleranceOf(text: string): number {
  if (!DECIMAL.test(text)) throw new EvalServiceError('invalid_eval_compare_options', { field: 'tolerance' });
  return Number(text);
}

/** The body of `PUT /evaluations/baselines/:evalSetId/:name`: exactly `{job_id}`. */
export function baselineBodyOf(body: unknown): string {
  const own = readOwnData(body, ['job_id']);
  if (own === null) throw new EvalServiceError('invalid_eval_request', { field: 'body' });
  if (own.unknown.length > 0) throw new EvalServiceError('unknown_eval_request_fields', optionFailureDetails(own.unknown));
  const jobId = own.values.job_id;
  if (typeof jobId !== 'string') throw new EvalServiceError('invalid_eval_request', { field: 'job_id' });
  return jobId;
}

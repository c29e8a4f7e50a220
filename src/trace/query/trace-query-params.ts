import { TraceStoreError } from '../trace-store.errors';
import type { TraceQueryOptions, TraceSelector } from '../trace-store.types';
import type { TraceIdentityKey } from '../trace.types';

const IDENTITY_KEYS: readonly TraceIdentityKey[] = ['run_id', 'trace_id', 'workflow_id', 'invocation_id'];
const NUMBER_KEYS = [
  ['after_cursor', 'afterCursor'],
  ['limit', 'limit'],
  ['max_bytes', 'maxBytes'],
] as const;
const DIGITS = /^\d{1,15}$/;

/** A query string as Express parses it: strings, or arrays for a repeated parameter. */
export type TraceQueryParams = Readonly<Record<string, unknown>>;

/**
 * The selector and options of `GET /traces` (spec 06 §11): the identity parameters present form the
 * selector (none → `'all'`), numbers are plain decimal digits, a repeated parameter is refused. Other
 * parameters are ignored, as Nest routes usually do.
 */
export function traceQueryOf(params: TraceQueryParams): { selector: TraceSelector; options: TraceQueryOptions } {
  const selector: Partial<Record<TraceIdentityKey, string>> = {};
  for (const key of IDENTITY_KEYS) {
    const value = params[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new TraceStoreError('invalid_trace_selector', { field: key });
    selector[key] = value;
  }
  const options: { -readonly [K in keyof TraceQueryOptions]: TraceQueryOptions[K] } = {};
  for (const [param, option] of NUMBER_KEYS) {
    const value = params[param];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !DIGITS.test(value)) throw new TraceStoreError('invalid_trace_query_options', { field: param });
    options[option] = Number(value);
  }
  return { selector: Object.keys(selector).length === 0 ? 'all' : selector, options };
}

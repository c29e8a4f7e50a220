import { isAbortSignal } from '../shared/async/abort-signal';
import { isPlainObject } from '../shared/options/plain-object';
import type { OverflowMode, ResolvedAdmissionConfig } from './admission-config';
import { isTimeoutMs } from './admission-config';
import { AdmissionError } from './admission.errors';
import { isValidId } from '../shared/ids/id-rule';
import { CLASS_RANK, type PriorityClass } from './flow/fair-share';

/** Options of `submit`, `acquire` and `run` (spec 01 §4). Unknown keys are ignored. */
export interface AdmissionRequestOptions {
  /**
   * Lifetime of the work. Abort while queued removes the request (`owner_down`); abort while
   * active revokes the permit. Without an owner a permit lives until release or cancel.
   */
  owner?: AbortSignal;
  /** The waiting caller. Abort while queued removes the request; no effect once granted. */
  signal?: AbortSignal;
  /** What to do without capacity. @default the controller's `overflow` */
  overflow?: OverflowMode;
  /** Absolute monotonic ms (any finite number, even in the past) or `'infinity'`; wins over `queueTimeoutMs`. */
  deadline?: number | 'infinity';
  /** Safe integer ≥ 0 or `'infinity'`, turned into `now + queueTimeoutMs` at submit. @default the controller's `defaultQueueTimeoutMs` */
  queueTimeoutMs?: number | 'infinity';
  /** The tenant the work is done for (a valid id); without it no tenant scope applies (spec 09 §1). */
  tenant?: string;
  /** Estimated units (for example tokens) the work will use; finite, 0..2^31. @default 1 */
  cost?: number;
  /** The request's class in the queue (spec 09 §4). @default 'normal' */
  priority?: PriorityClass;
}

/** Request options after validation: the deadline is absolute (`Infinity` for none). */
export interface ParsedRequest {
  owner: AbortSignal | undefined;
  signal: AbortSignal | undefined;
  overflow: OverflowMode;
  deadline: number;
  tenant: string | undefined;
  cost: number;
  /** {@link CLASS_RANK} of the priority. */
  rank: number;
}

/** The largest `cost` of a request (spec 09 §1). */
export const MAX_REQUEST_COST = 2 ** 31;

/** A request's `cost`: a number in 0..{@link MAX_REQUEST_COST}. */
export const isRequestCost = (value: unknown): value is number => typeof value === 'number' && value >= 0 && value <= MAX_REQUEST_COST;

/** A request's `priority`: `'high'`, `'normal'` or `'low'`. */
export const isPriorityClass = (value: unknown): value is PriorityClass => typeof value === 'string' && Object.hasOwn(CLASS_RANK, value);

const invalid = (field: string) => new AdmissionError('invalid_admission_options', { field });

/** Validates every present option (even an overridden one) and computes the absolute deadline. */
export function parseRequestOptions(
  opts: AdmissionRequestOptions | undefined,
  config: ResolvedAdmissionConfig,
  now: number,
): ParsedRequest {
  if (opts === undefined) {
    return { owner: undefined, signal: undefined, overflow: config.overflow, deadline: now + config.defaultQueueTimeoutMs, tenant: undefined, cost: 1, rank: CLASS_RANK.normal };
  }
  let owner, signal, overflow, deadline, queueTimeoutMs, tenant, cost, priority;
  try {
    if (!isPlainObject(opts)) throw invalid('opts');
    ({ owner, signal, overflow, deadline, queueTimeoutMs, tenant, cost, priority } = opts);
  } catch {
    // includes a getter or proxy trap that throws: the caller gets a typed error, never its exception
    throw invalid('opts');
  }
  if (owner !== undefined && !isAbortSignal(owner)) throw invalid('owner');
  if (signal !== undefined && !isAbortSignal(signal)) throw invalid('signal');
  if (overflow !== undefined && overflow !== 'reject' && overflow !== 'queue') throw invalid('overflow');
  if (deadline !== undefined && !isDeadline(deadline)) throw invalid('deadline');
  if (queueTimeoutMs !== undefined && !isTimeoutMs(queueTimeoutMs)) throw invalid('queueTimeoutMs');
  if (tenant !== undefined && !isValidId(tenant)) throw invalid('tenant');
  if (cost !== undefined && !isRequestCost(cost)) throw invalid('cost');
  if (priority !== undefined && !isPriorityClass(priority)) throw invalid('priority');
  return {
    tenant,
    cost: cost ?? 1,
    rank: CLASS_RANK[(priority as PriorityClass | undefined) ?? 'normal'],
    owner,
    signal,
    overflow: overflow ?? config.overflow,
    deadline: deadline !== undefined ? toNumber(deadline) : now + (queueTimeoutMs !== undefined ? toNumber(queueTimeoutMs) : config.defaultQueueTimeoutMs),
  };
}


/** `now + ms`, or `'infinity'`; `ms` must be a safe integer ≥ 0 or `'infinity'`. */
export function deadlineAfterMs(ms: number | 'infinity', now: number): number | 'infinity' {
  if (!isTimeoutMs(ms)) throw invalid('ms');
  return ms === 'infinity' || ms === Infinity ? 'infinity' : now + ms;
}

function isDeadline(value: unknown): value is number | 'infinity' {
  return value === 'infinity' || value === Infinity || (typeof value === 'number' && Number.isFinite(value));
}

function toNumber(value: number | 'infinity'): number {
  return value === 'infinity' ? Infinity : value;
}

/**
 * `opts` with `signal` also serving as `owner` when no owner is given (spec 01 §5.7: `run` stops
 * queued and running work alike when the caller's signal aborts). Anything else is returned as it
 * is, so the submit that follows reports hostile options as invalid.
 */
export function withSignalAsOwner(opts: AdmissionRequestOptions | undefined): AdmissionRequestOptions | undefined {
  try {
    if (isPlainObject(opts) && opts.owner === undefined && isAbortSignal(opts.signal)) return { ...opts, owner: opts.signal };
  } catch {
    // let the submit report the hostile options as invalid
  }
  return opts;
}

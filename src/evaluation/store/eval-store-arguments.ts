import { canonicalJson } from '../../json/canonical-json';
import { hasEscapedNul } from '../../json/escaped-nul';
import { measure } from '../../json/measure';
import { readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn, isBoolean } from '../../shared/options/option-rules';
import { EvalServiceError } from '../eval.errors';
import { evalOptionFailure } from '../eval-option-failure';
import { TERMINAL_EVAL_PHASES, type EvalPhase, type EvalPruneOptions } from '../eval.types';
import { EVAL_JOB_ID } from '../eval-scope';
import { isKeyText } from './eval-cursor';
import type { ResolvedEvalStoreOptions } from './eval-store-options';

/** Largest set id, baseline name and app, in UTF-8 bytes (spec 05 §4.1). */
export const MAX_EVAL_KEY_BYTES = 256;
/** Largest set version, in UTF-8 bytes. */
export const MAX_EVAL_VERSION_BYTES = 128;
/** Largest stored reason, in UTF-8 bytes (the `job_reason_check` of the table). */
export const MAX_EVAL_REASON_BYTES = 4096;

const PHASES: readonly EvalPhase[] = ['queued', 'running', ...TERMINAL_EVAL_PHASES];
/** The phases each target may be reached from (spec 05 §5); terminal phases reach nothing. */
const LEGAL_SOURCES: Readonly<Record<EvalPhase, readonly EvalPhase[]>> = Object.freeze({
  queued: [],
  running: ['queued'],
  completed: ['running'],
  failed: ['queued', 'running'],
  timed_out: ['running'],
  cancelled: ['queued', 'running'],
});
const NEEDS_REASON: readonly EvalPhase[] = ['failed', 'timed_out', 'cancelled'];

/** `invalid_eval_store_arguments` naming the argument (`{field}`). */
export function invalidArgument(argument: string): EvalServiceError {
  return new EvalServiceError('invalid_eval_store_arguments', { field: argument });
}

/** A job id that cannot be one the store minted is `not_found`, like an absent one. */
export function jobIdOrNotFound(jobId: unknown): string {
  if (typeof jobId !== 'string' || !EVAL_JOB_ID.test(jobId)) throw new EvalServiceError('not_found');
  return jobId;
}

/** A key that no row can have (not text Postgres holds, empty, too long) is `not_found`. */
export function keyOrNotFound(value: unknown, maxBytes: number = MAX_EVAL_KEY_BYTES): string {
  if (!isKeyText(value, maxBytes) || value.length === 0) throw new EvalServiceError('not_found');
  return value;
}

/** A key to be written: non-empty text Postgres holds within `maxBytes`; else `invalid_eval_store_arguments`. */
export function keyToWrite(value: unknown, argument: string, maxBytes: number = MAX_EVAL_KEY_BYTES): string {
  if (!isKeyText(value, maxBytes) || value.length === 0) throw invalidArgument(argument);
  return value;
}

/** The phase of a transition: the legal sources of `to` and what it writes. */
export interface TransitionArguments {
  readonly expected: readonly EvalPhase[];
  readonly to: EvalPhase;
  readonly legalSources: readonly EvalPhase[];
  readonly reason: string | null;
  /** Canonical JSON text and bytes of the result, only with `completed`. */
  readonly result: { readonly text: string; readonly bytes: number } | null;
}

const isPhase = (value: unknown): value is EvalPhase => typeof value === 'string' && (PHASES as readonly string[]).includes(value);

/**
 * Checks a transition's arguments: `expected` 1..6 phases, `to` a phase, `fields` with a
 * reason (≤ 4096 bytes) exactly for `failed`, `timed_out` and `cancelled` and a result exactly for
 * `completed`. A result above `maxRecordBytes` on its own is `eval_record_too_large`.
 */
export function transitionArguments(expected: unknown, to: unknown, fields: unknown, maxRecordBytes: number): TransitionArguments {
  if (!Array.isArray(expected) || expected.length === 0 || expected.length > PHASES.length || !expected.every(isPhase)) throw invalidArgument('expected');
  if (!isPhase(to)) throw invalidArgument('to');
  const read = readOptions(fields, { reason: () => true, result: () => true }, { name: 'fields', unknownKeys: 'refuse' });
  if (!read.ok) throw invalidArgument(read.unknown.length > 0 ? 'fields' : read.fields[0]);
  const given = read.values;
  const needsReason = NEEDS_REASON.includes(to);
  const reason = given.reason;
  if (needsReason !== (reason !== undefined)) throw invalidArgument('reason');
  if (reason !== undefined && (!isKeyText(reason, MAX_EVAL_REASON_BYTES) || reason.length === 0)) throw invalidArgument('reason');
  if ((to === 'completed') !== (given.result !== undefined)) throw invalidArgument('result');
  return Object.freeze({
    expected: [...new Set(expected)],
    to,
    legalSources: LEGAL_SOURCES[to],
    reason: (reason as string | undefined) ?? null,
    result: to === 'completed' ? resultText(given.result, maxRecordBytes) : null,
  });
}

function resultText(result: unknown, maxRecordBytes: number): { text: string; bytes: number } {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) throw invalidArgument('result');
  let text: string;
  try {
    if (measure(result, maxRecordBytes).exceeded) throw new EvalServiceError('eval_record_too_large');
    text = canonicalJson(result);
  } catch (error) {
    if (EvalServiceError.isEvalServiceError(error)) throw error;
    throw invalidArgument('result');
  }
  if (hasEscapedNul(text)) throw invalidArgument('result');
  return { text, bytes: Buffer.byteLength(text, 'utf8') };
}

/** A checked page request: the limit and the cursor, if any. */
export interface PageArguments {
  readonly limit: number;
  readonly cursor: unknown;
}

/**
 * `{limit?, cursor?}` with the limit in 1..`maxPageLimit` (default `defaultPageLimit`); a bad limit is
 * `invalid_eval_store_arguments` (`{field: 'limit'}`), an unknown key or a value that is no plain
 * object `{field: 'options'}`. The cursor is decoded by the listing (`invalid_eval_cursor`).
 */
export function pageArguments(options: unknown, settings: ResolvedEvalStoreOptions): PageArguments {
  const read = readOptions(options, { limit: integerIn(1, settings.maxPageLimit), cursor: () => true }, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw invalidArgument(read.unknown.length > 0 ? 'options' : read.fields[0]);
  return { limit: (read.values.limit as number | undefined) ?? settings.defaultPageLimit, cursor: read.values.cursor };
}

/** Checked prune options (spec 05 §6). */
export interface PruneArguments {
  readonly before: number;
  readonly limit: number;
  readonly cursor: unknown;
  readonly includeBaselines: boolean;
}

/**
 * `{before, limit?, cursor?, includeBaselines?}`: `before` a safe integer ≥ 0 (epoch ms), the limit in
 * 1..`maxPruneLimit`; anything else is `invalid_prune_options` naming every unknown key (`{field}` or
 * `{fields}`), else the first bad option (`{field}`). A malformed cursor is `invalid_eval_cursor`, found later.
 */
export function pruneArguments(options: unknown, settings: ResolvedEvalStoreOptions): PruneArguments {
  const rules: OptionRules<keyof EvalPruneOptions> = {
    before: integerIn(0),
    limit: integerIn(1, settings.maxPruneLimit),
    cursor: () => true,
    includeBaselines: isBoolean,
  };
  const read = readOptions(options, rules, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw evalOptionFailure(read, 'invalid_prune_options');
  const given = read.values;
  if (given.before === undefined) throw new EvalServiceError('invalid_prune_options', { field: 'before' });
  return {
    before: given.before as number,
    limit: (given.limit as number | undefined) ?? settings.defaultPruneLimit,
    cursor: given.cursor,
    includeBaselines: (given.includeBaselines as boolean | undefined) ?? false,
  };
}

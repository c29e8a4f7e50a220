import { readOwnData } from '../shared/options/option-reader';

/** Projection of a `failed` or `cancelled` outcome before it is stored (option `sanitizeTerminalOutcome`). */
export type SanitizeTerminalOutcome = (phase: 'failed' | 'cancelled', outcome: unknown) => unknown;

/** A stored reason code: what `failed` and `cancelled` outcomes keep by default. */
export const REASON_CODE = /^[a-z0-9_.:-]{1,128}$/;

const REASON_KEYS = ['reason', 'code', 'error_code'] as const;

/**
 * The default projection of spec 04 §5: `{reason}` where the reason is the first of
 * `outcome.reason`, `outcome.code`, `outcome.error_code` that is a string matching
 * `^[a-z0-9_.:-]{1,128}$`, else `'unspecified'`. Only own data properties of a plain object are
 * read, so no getter or proxy runs, and exception text never reaches the row.
 *
 * @example
 * defaultSanitizeTerminalOutcome('failed', { code: 'tool_timeout', message: 'stack…' }); // { reason: 'tool_timeout' }
 */
export function defaultSanitizeTerminalOutcome(_phase: 'failed' | 'cancelled', outcome: unknown): { reason: string } {
  return { reason: reasonOf(outcome) };
}

function reasonOf(outcome: unknown): string {
  const own = readOwnData(outcome, REASON_KEYS);
  if (own === null) return 'unspecified';
  for (const key of REASON_KEYS) {
    const value = own.values[key];
    if (typeof value === 'string' && REASON_CODE.test(value)) return value;
  }
  return 'unspecified';
}

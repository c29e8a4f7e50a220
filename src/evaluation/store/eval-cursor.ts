import { decodeKeysetCursor, encodeKeysetCursor, type KeysetCursorPart } from '../../json/keyset-cursor';
import { EvalServiceError } from '../eval.errors';

/** One element of a cursor's key. */
export type CursorPart = KeysetCursorPart;

/** Longest cursor accepted, in characters: room for three 256-byte keys of control characters, escaped. */
export const MAX_EVAL_CURSOR_CHARS = 8192;

/**
 * The opaque cursor of a keyset position (the kernel's keyset cursor).
 *
 * @example
 * encodeEvalCursor(['set-a', 'v1']); // 'WyJzZXQtYSIsInYxIl0'
 */
export function encodeEvalCursor(key: readonly CursorPart[]): string {
  return encodeKeysetCursor(key);
}

/**
 * The key `cursor` encodes, as `read` accepts it (`read` returns `null` for a wrong shape). Only
 * what {@link encodeEvalCursor} can produce is accepted; anything else is `invalid_eval_cursor`.
 */
export function decodeEvalCursor<T>(cursor: unknown, read: (parts: readonly unknown[]) => T | null): T {
  const parts = decodeKeysetCursor(cursor, MAX_EVAL_CURSOR_CHARS);
  const key = parts === null ? null : read(parts);
  if (key === null) throw new EvalServiceError('invalid_eval_cursor');
  return key;
}

/** A text key part Postgres can hold: a well-formed string without U+0000, at most `maxBytes` UTF-8 bytes. */
export function isKeyText(value: unknown, maxBytes: number): value is string {
  return typeof value === 'string' && !value.includes('\u0000') && value.isWellFormed() && Buffer.byteLength(value, 'utf8') <= maxBytes;
}

/** A `bigint` column value as JavaScript holds it exactly. */
export function isKeyInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

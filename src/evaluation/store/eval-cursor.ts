import { isUtf8 } from 'node:buffer';
import { canonicalJson } from '../../json/canonical-json';
import { EvalServiceError } from '../eval.errors';

/** One element of a cursor's key. */
export type CursorPart = string | number;

/** Longest cursor accepted, in characters: room for three 256-byte keys of control characters, escaped. */
export const MAX_EVAL_CURSOR_CHARS = 8192;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The opaque cursor of a keyset position: base64url (no padding) of the canonical JSON array of
 * `key`. Canonical JSON of an array is injective, so no two keys share a cursor.
 *
 * @example
 * encodeEvalCursor(['set-a', 'v1']); // 'WyJzZXQtYSIsInYxIl0'
 */
export function encodeEvalCursor(key: readonly CursorPart[]): string {
  return Buffer.from(canonicalJson(key), 'utf8').toString('base64url');
}

/**
 * The key `cursor` encodes, as `read` accepts it (`read` returns `null` for a wrong shape). Only
 * what {@link encodeEvalCursor} can produce is accepted: canonical base64url of canonical JSON of an
 * array; anything else is `invalid_eval_cursor`.
 */
export function decodeEvalCursor<T>(cursor: unknown, read: (parts: readonly unknown[]) => T | null): T {
  const invalid = () => new EvalServiceError('invalid_eval_cursor');
  if (typeof cursor !== 'string' || cursor.length > MAX_EVAL_CURSOR_CHARS || !BASE64URL.test(cursor)) throw invalid();
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor || !isUtf8(bytes)) throw invalid();
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
    if (!Array.isArray(parsed) || canonicalJson(parsed) !== text) throw invalid();
  } catch {
    throw invalid();
  }
  const key = read(parsed);
  if (key === null) throw invalid();
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

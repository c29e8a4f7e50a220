import { isUtf8 } from 'node:buffer';
import { canonicalJson } from './canonical-json';

/** One element of a keyset cursor's key. */
export type KeysetCursorPart = string | number;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The opaque cursor of a keyset position: base64url (no padding) of the canonical JSON array of
 * `key`. Canonical JSON of an array is injective, so no two keys share a cursor.
 *
 * @example
 * encodeKeysetCursor(['k', 'report.txt']); // 'WyJrIiwicmVwb3J0LnR4dCJd'
 */
export function encodeKeysetCursor(key: readonly KeysetCursorPart[]): string {
  return Buffer.from(canonicalJson(key), 'utf8').toString('base64url');
}

/**
 * The array `cursor` encodes, or `null` unless it is exactly what {@link encodeKeysetCursor} produces
 * (canonical base64url of the canonical JSON of an array) and at most `maxChars` characters long.
 * The caller checks the shape of the parts.
 */
export function decodeKeysetCursor(cursor: unknown, maxChars: number): readonly unknown[] | null {
  if (typeof cursor !== 'string' || cursor.length > maxChars || !BASE64URL.test(cursor)) return null;
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor || !isUtf8(bytes)) return null;
  const text = bytes.toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) && canonicalJson(parsed) === text ? parsed : null;
  } catch {
    return null;
  }
}

/** `\u0000` as `JSON.stringify` escapes it, preceded by an even number of backslashes (so not `\\u0000`). */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * True when JSON text printed by `JSON.stringify` or `canonicalJson` holds U+0000 in a string or a
 * key: Postgres `jsonb` refuses it, so a durable store checks before it writes.
 */
export function hasEscapedNul(json: string): boolean {
  return json.includes('\\u0000') && ESCAPED_NUL.test(json);
}

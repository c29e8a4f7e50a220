/**
 * Compares two well-formed strings in the order of their UTF-8 bytes (Postgres `COLLATE "C"`, a
 * bytewise sort), without encoding them: UTF-8 byte order is code point order, which differs from
 * JavaScript's UTF-16 code unit order for characters above U+FFFF against U+E000..U+FFFF.
 *
 * @example
 * ['\u{1F600}', '\uFFFD'].sort(compareUtf8); // ['\uFFFD', '\u{1F600}'] (the default sort gives the reverse)
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // below the surrogates (and among the same kind of unit) code units order like code points
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate === ySurrogate) return x < y ? -1 : 1;
    // a surrogate starts a code point above U+FFFF, beyond every non-surrogate unit
    return xSurrogate ? 1 : -1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

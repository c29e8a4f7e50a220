/**
 * UTF-8 bytes of each UTF-16 code unit in `JSON.stringify` string form: 1 for printable ASCII, 2 for
 * the short escapes (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`), 6 for other controls (`\u00xx`),
 * 2 below U+0800, 3 above; 0 marks a surrogate, counted with its pair. One table lookup per code
 * unit is cheaper than a chain of range tests (64 KiB, filled natively at load).
 */
const JSON_UNIT_BYTES = new Uint8Array(0x10000).fill(3).fill(2, 0x80, 0x800).fill(0, 0xd800, 0xe000).fill(1, 0x20, 0x80).fill(6, 0, 0x20);
for (const c of [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x22, 0x5c]) JSON_UNIT_BYTES[c] = 2;

/** UTF-8 bytes of `JSON.stringify(s)`, quotes included; -1 when `s` holds a lone surrogate. */
export function jsonStringBytes(s: string): number {
  let bytes = 2;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const unit = JSON_UNIT_BYTES[s.charCodeAt(i)];
    if (unit !== 0) bytes += unit;
    else if (s.charCodeAt(i) <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else return -1;
  }
  return bytes;
}

/**
 * Length of `String(n)` (the canonical form of a number); -1 for `NaN` and `±Infinity`. A 32-bit
 * integer (`-0` included, which prints as `0`) is counted without building its string.
 */
export function numberLength(n: number): number {
  if ((n | 0) === n) return n < 0 ? 1 + digits(-n) : digits(n);
  return Number.isFinite(n) ? String(n).length : -1;
}

/** Decimal digits of an integer 0 ≤ n ≤ 2^31. */
function digits(n: number): number {
  if (n < 1e5) return n < 10 ? 1 : n < 100 ? 2 : n < 1e3 ? 3 : n < 1e4 ? 4 : 5;
  return n < 1e6 ? 6 : n < 1e7 ? 7 : n < 1e8 ? 8 : n < 1e9 ? 9 : 10;
}

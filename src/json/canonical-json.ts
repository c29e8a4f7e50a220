import { walkJson } from './json-walker';

/**
 * RFC 8785 (JCS) canonical JSON of a JSON-like value: no whitespace, members sorted by key in UTF-16
 * code-unit order, numbers and strings as `JSON.stringify` prints them (`-0` → `0`). Iterative, so a
 * 1,000,000-deep array is fine. Throws `JsonError` (`unsupported_json_term` with
 * `{path, kind}`, or `invalid_utf8` with `{path}`) for the first value JSON cannot hold faithfully.
 *
 * Not built on the `canonicalize` package: its 2.x line is CommonJS and would load, but it recurses,
 * calls `toJSON` and getters, and accepts non-plain objects and lone surrogates; none of its
 * alternatives rejects non-plain objects, accessors and lone surrogates without recursion either.
 *
 * @example
 * canonicalJson({ b: [1e21, -0], a: 'é' }); // '{"a":"é","b":[1e+21,0]}'
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  walkJson(value, Infinity, out, null);
  return out.join('');
}

// controls, line separators, and the invisible and direction-changing format characters (zero-width
// space and joiners, LRM/RLM, bidi embeddings, overrides and isolates, BOM) that reorder how a line reads
const UNSAFE_IN_LOG = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\\"]/g;

const escapeCharacter = (char: string): string =>
  char === '\\' ? '\\\\' : char === '"' ? '\\"' : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * `value` as a double-quoted log field with controls, line separators, bidi and invisible format
 * characters, quotes and backslashes escaped, so no value can end a log line, colour a terminal,
 * reorder how the line reads or fake a field.
 *
 * @example
 * logField('a\n\u001b[31mFAKE'); // '"a\\u000a\\u001b[31mFAKE"'
 */
export function logField(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return `"${text.replace(UNSAFE_IN_LOG, escapeCharacter)}"`;
}

import { canonicalJson, frozenJsonParse, hasEscapedNul } from '../../../../json';

/**
 * The text of a `jsonb` parameter holding `value` (an object): its canonical JSON, as the session
 * service stores content. `jsonb` cannot hold U+0000 in a string or key, which the in-memory store
 * keeps (a cancel reason, say); such a value is stored as a `jsonb` string holding its JSON text,
 * which an object column never is otherwise, so {@link decodeJson} tells the two apart and every
 * value round-trips. Throws `JsonError` for what JSON cannot hold (a lone surrogate, a cycle).
 */
export function encodeJson(value: unknown): string {
  const text = canonicalJson(value);
  return hasEscapedNul(text) ? JSON.stringify(text) : text;
}

/** The deep-frozen value of a `jsonb` column read as `::text`, undoing {@link encodeJson}. */
export function decodeJson(text: string): unknown {
  const value = frozenJsonParse(text);
  return typeof value === 'string' ? frozenJsonParse(value) : value;
}

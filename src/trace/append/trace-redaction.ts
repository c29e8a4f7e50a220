/** What a redacted secret is replaced by. */
export const REDACTED = '[redacted]';

/**
 * The secret shapes of spec 06 §4 step 4, each match replaced whole by {@link REDACTED}. A small,
 * deliberately broad set: a false positive costs a metadata string, a miss leaks a credential. Every
 * pattern starts at a word boundary and has no nested quantifier, so its cost is linear in the text.
 */
export const SECRET_PATTERNS: readonly RegExp[] = Object.freeze([
  /** `Bearer <token>` (case-insensitive), the token being 8+ characters of RFC 6750 `b64token`. */
  /\bbearer\s+[A-Za-z0-9._~+/-]{8,}=*/gi,
  /** `password=`, `secret=`, `token=`, `api_key=` (also `api-key=`, `apikey=`) with its value, and compounds such as `access_token=` or `client_secret=`. */
  /\b\w*(?:password|secret|token|api[_-]?key)\s*=\s*(?:"[^"]*"|'[^']*'|[^\s&;,]+)/gi,
  /** A JWT: base64url header starting `eyJ` (`{"`), payload, optional signature. */
  /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g,
  /** `sk-`-style API keys (`sk-…`, `sk-proj-…`, `sk-ant-…`, `sk_live_…`), 16+ characters after the prefix. */
  /\bsk[-_][A-Za-z0-9_-]{16,}/g,
]);

/**
 * `text` with every match of {@link SECRET_PATTERNS} replaced by `[redacted]`.
 *
 * @example
 * redactSecrets('auth Bearer abcdefgh12345678 ok'); // 'auth [redacted] ok'
 * redactSecrets('db?password=hunter2&x=1');          // 'db?[redacted]&x=1'
 */
export function redactSecrets(text: string): string {
  let result = text;
  for (const pattern of SECRET_PATTERNS) result = result.replace(pattern, REDACTED);
  return result;
}

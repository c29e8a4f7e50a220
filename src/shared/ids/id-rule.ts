/** Longest id (agent id, subject, ledger text), in UTF-8 bytes. */
export const MAX_ID_BYTES = 256;

/** C0 controls (NUL included), DEL and C1 controls: never part of an id, so an id can never forge a log line. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The one id rule of the package: a well-formed string (no lone surrogate) of 1..`maxBytes` UTF-8
 * bytes without control characters. Ids are otherwise opaque: `"__proto__"` is an ordinary id.
 * Runs no user code.
 */
export function isValidId(value: unknown, maxBytes: number = MAX_ID_BYTES): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxBytes) return false;
  // a UTF-16 code unit takes at most 3 UTF-8 bytes, so short strings need no byte count
  if (value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes) return false;
  return value.isWellFormed() && !CONTROL_CHARACTER.test(value);
}

/**
 * The one rule of token ids, which travel in URLs, headers and lock keys: 1..128 characters of
 * `A-Z a-z 0-9 . _ : -` (session, call, instance and outbox adapter ids). `@Matches` of a DTO uses
 * the pattern, everything else {@link isTokenId}.
 */
export const TOKEN_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** True for a string that follows {@link TOKEN_ID_PATTERN}. */
export function isTokenId(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_ID_PATTERN.test(value);
}

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

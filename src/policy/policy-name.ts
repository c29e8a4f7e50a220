/** Longest agent, tool or content subject name, in UTF-8 bytes. */
export const MAX_SUBJECT_BYTES = 256;
/** Longest policy id, in UTF-8 bytes. */
export const MAX_POLICY_ID_BYTES = 128;

/** True for a well-formed string (no lone surrogate) of 1..`maxBytes` UTF-8 bytes. Runs no user code. */
export function isValidName(value: unknown, maxBytes: number): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxBytes) return false;
  // a UTF-16 code unit takes at most 3 UTF-8 bytes, so short strings need no byte count
  if (value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes) return false;
  return value.isWellFormed();
}

/** The subject rule of spec 02 §4: a well-formed string of 1..256 UTF-8 bytes. */
export function isValidSubject(value: unknown): value is string {
  return isValidName(value, MAX_SUBJECT_BYTES);
}

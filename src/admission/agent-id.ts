const MAX_AGENT_ID_BYTES = 256;

/**
 * A valid agent id is a string of 1..256 UTF-8 bytes that is well-formed UTF-16 (no lone surrogate).
 * Ids are opaque: `"__proto__"` is an ordinary id.
 */
export function isValidAgentId(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0) return false;
  // a UTF-16 code unit takes at most 3 UTF-8 bytes, so short strings need no byte count
  if (value.length * 3 > MAX_AGENT_ID_BYTES && Buffer.byteLength(value, 'utf8') > MAX_AGENT_ID_BYTES) return false;
  return value.isWellFormed();
}

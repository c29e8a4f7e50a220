import { sha256Hex } from '../../shared/text/sha256';
import { TraceStoreError } from '../trace-store.errors';

/** Longest principal, in UTF-8 bytes (spec 06 §3). */
export const MAX_PRINCIPAL_BYTES = 256;

/**
 * True for a principal: a well-formed string of 1..256 UTF-8 bytes. Control characters are allowed
 * (unlike `isValidId`): a principal is only ever hashed, never logged or shown. A lone surrogate is
 * refused because it has no UTF-8 form, so two different ones would share a digest.
 */
export function isTracePrincipal(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_PRINCIPAL_BYTES) return false;
  // a UTF-16 code unit takes at most 3 UTF-8 bytes, so short strings need no byte count
  if (value.length * 3 > MAX_PRINCIPAL_BYTES && Buffer.byteLength(value, 'utf8') > MAX_PRINCIPAL_BYTES) return false;
  return value.isWellFormed();
}

/** The SHA-256 hex digest the store keeps instead of `principal`; throws `invalid_trace_principal`. */
export function principalDigest(principal: unknown): string {
  if (!isTracePrincipal(principal)) throw new TraceStoreError('invalid_trace_principal', {});
  return sha256Hex(principal);
}

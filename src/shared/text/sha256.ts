import * as crypto from 'node:crypto';

/** `crypto.hash` (Node ≥ 20.12): a one-shot digest without a `Hash` object per call. */
const oneShot: typeof crypto.hash | undefined = typeof crypto.hash === 'function' ? crypto.hash : undefined;

/** Lowercase hex SHA-256 of `data`; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  if (oneShot !== undefined) return oneShot('sha256', data, 'hex');
  return crypto.createHash('sha256').update(data).digest('hex');
}

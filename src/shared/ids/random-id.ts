import { randomFillSync } from 'node:crypto';

const ID_BYTES = 18;
const POOL_IDS = 2048;
const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
let offset = pool.length;

/**
 * `prefix` followed by 24 URL-safe characters: 18 cryptographically random bytes in base64url.
 * Bytes are drawn from a pool refilled by `randomFillSync`, because a `randomBytes(18)` call per id
 * costs microseconds and ids are minted on every admission.
 */
export function randomId(prefix: string): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = prefix + pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

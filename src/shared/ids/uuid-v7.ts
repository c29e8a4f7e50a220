import { randomFillSync } from 'node:crypto';

/** Fills its argument with random bytes. */
export type RandomFill = (bytes: Uint8Array) => void;

const MAX_TIMESTAMP_MS = 2 ** 48 - 1;
const COUNTER_BITS = 42;
const COUNTER_LIMIT = 2 ** COUNTER_BITS;
const TWO_POW_30 = 2 ** 30;
const TWO_POW_32 = 2 ** 32;

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** `randomFillSync` through a pool, because one call per id costs microseconds. */
function pooledRandomFill(bytes: Uint8Array): void {
  const n = bytes.length;
  if (poolOffset + n > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  // a byte loop: `pool.subarray` would allocate a Buffer per id
  for (let i = 0; i < n; i++) bytes[i] = pool[poolOffset + i];
  poolOffset += n;
}

/** Two lowercase hex digits of each byte value. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/**
 * UUIDv7 (RFC 9562 §5.7) with the monotonic-counter method of §6.2 (method 1): a 42-bit counter in
 * `rand_a` and the top of `rand_b`, seeded randomly each new millisecond and incremented within one.
 * A timestamp that does not move forward (same millisecond, or the wall clock stepped back) reuses the
 * last one, and a counter overflow advances it, so ids increase as strings in issue order.
 *
 * Written here rather than taken from the `uuid` package: its v11 line is not a dependency of this
 * package, and later lines are ESM only (00-conventions).
 */
export class UuidV7Generator {
  private lastMs = -1;
  private counter = 0;
  private readonly randomBytes = new Uint8Array(10);

  /**
   * @param fill source of random bytes. @default a pooled `crypto.randomFillSync`
   * @param seedBits random bits of each millisecond's counter seed; the other `42 - seedBits` bits
   *   are headroom for increments. @default 41
   */
  constructor(
    private readonly fill: RandomFill = pooledRandomFill,
    private readonly seedBits = 41,
  ) {}

  /** The next id for wall-clock time `nowMs` (clamped to the 48-bit range), lowercase and hyphenated. */
  next(nowMs: number): string {
    const ms = Number.isFinite(nowMs) ? Math.min(Math.max(Math.floor(nowMs), 0), MAX_TIMESTAMP_MS) : 0;
    this.fill(this.randomBytes);
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.counter = this.seed();
    } else if (++this.counter === COUNTER_LIMIT) {
      this.lastMs = Math.min(this.lastMs + 1, MAX_TIMESTAMP_MS);
      this.counter = this.seed();
    }
    return this.format();
  }

  private seed(): number {
    const b = this.randomBytes;
    const high = b[0] * 2 ** 8 + b[1];
    const low = ((b[2] << 24) | (b[3] << 16) | (b[4] << 8) | b[5]) >>> 0;
    return (high * TWO_POW_32 + low) % 2 ** this.seedBits;
  }

  private format(): string {
    const ms = this.lastMs;
    const msHigh = Math.floor(ms / TWO_POW_32);
    const msLow = ms % TWO_POW_32;
    const counterHigh = Math.floor(this.counter / TWO_POW_30);
    const counterLow = this.counter % TWO_POW_30;
    const random = this.randomBytes;
    return (
      HEX[msHigh >>> 8] +
      HEX[msHigh & 0xff] +
      HEX[msLow >>> 24] +
      HEX[(msLow >>> 16) & 0xff] +
      '-' +
      HEX[(msLow >>> 8) & 0xff] +
      HEX[msLow & 0xff] +
      '-' +
      HEX[0x70 | (counterHigh >>> 8)] +
      HEX[counterHigh & 0xff] +
      '-' +
      HEX[0x80 | (counterLow >>> 24)] +
      HEX[(counterLow >>> 16) & 0xff] +
      '-' +
      HEX[(counterLow >>> 8) & 0xff] +
      HEX[counterLow & 0xff] +
      HEX[random[6]] +
      HEX[random[7]] +
      HEX[random[8]] +
      HEX[random[9]]
    );
  }
}

const processGenerator = new UuidV7Generator();

/** A UUIDv7 from the process-wide generator: ids increase as strings in issue order within the process. */
export function uuidV7(nowMs: number = Date.now()): string {
  return processGenerator.next(nowMs);
}

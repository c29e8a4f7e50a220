import { UuidV7Generator } from './uuid-v7';

/** RFC 9562 layout written with Buffer methods: 48-bit ms, version 7, 42-bit counter, variant 10, 32 random bits. */
function reference(ms: number, counter: number, random: Uint8Array): string {
  const out = Buffer.alloc(16);
  out.writeUIntBE(ms, 0, 6);
  const counterHigh = Math.floor(counter / 2 ** 30);
  const counterLow = counter % 2 ** 30;
  out.writeUInt16BE(0x7000 | counterHigh, 6);
  out.writeUInt32BE((0x80000000 | counterLow) >>> 0, 8);
  out.set(random.subarray(6, 10), 12);
  const hex = out.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The counter seed the generator derives from the first six random bytes (41 random bits by default). */
const seedOf = (b: Uint8Array) => ((b[0] * 2 ** 8 + b[1]) * 2 ** 32 + (((b[2] << 24) | (b[3] << 16) | (b[4] << 8) | b[5]) >>> 0)) % 2 ** 41;

describe('UuidV7Generator formatting', () => {
  it('lays out every field like a Buffer-based encoder, for random bytes and timestamps at the edges', () => {
    let state = 12345;
    const byte = () => (state = (state * 1103515245 + 12345) % 2 ** 31) & 0xff;
    const times = [0, 1, 255, 256, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 12345, 1_764_500_000_000, 2 ** 48 - 1];
    for (const ms of times) {
      for (let round = 0; round < 50; round++) {
        const random = Uint8Array.from({ length: 10 }, byte);
        if (round === 0) random.fill(0xff);
        if (round === 1) random.fill(0);
        const generator = new UuidV7Generator((bytes) => bytes.set(random));
        expect(generator.next(ms)).toBe(reference(ms, seedOf(random), random));
        // the next id in the same millisecond: the counter plus one
        expect(generator.next(ms)).toBe(reference(ms, seedOf(random) + 1, random));
      }
    }
  });

  it('draws fresh random bytes from the pool for every id', () => {
    const generator = new UuidV7Generator();
    const tails = new Set(Array.from({ length: 2_000 }, (_, i) => generator.next(1_000 + i).slice(-8)));
    expect(tails.size).toBeGreaterThan(1_990);
  });
});

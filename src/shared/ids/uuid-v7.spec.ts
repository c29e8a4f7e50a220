import { UuidV7Generator, uuidV7, type RandomFill } from './uuid-v7';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timestampOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
const counterOf = (id: string) => {
  const hex = id.replace(/-/g, '');
  const randA = parseInt(hex.slice(13, 16), 16);
  const randBTop = parseInt(hex.slice(16, 24), 16) & 0x3fffffff;
  return randA * 2 ** 30 + randBTop;
};
const constantFill = (byte: number): RandomFill => (bytes) => bytes.fill(byte);

describe('UuidV7Generator', () => {
  it('formats lowercase RFC 9562 version 7 ids with the variant bits 10', () => {
    const generator = new UuidV7Generator();
    for (let i = 0; i < 100; i++) expect(generator.next(1_700_000_000_000 + i)).toMatch(UUID_V7);
  });

  it('puts the millisecond timestamp in the first 48 bits', () => {
    const id = new UuidV7Generator().next(0x0123_4567_89ab);
    expect(id.startsWith('01234567-89ab-7')).toBe(true);
    expect(timestampOf(id)).toBe(0x0123_4567_89ab);
  });

  it('issues strictly increasing ids within one millisecond', () => {
    const generator = new UuidV7Generator();
    let previous = generator.next(5_000);
    for (let i = 0; i < 10_000; i++) {
      const id = generator.next(5_000);
      expect(id > previous).toBe(true);
      expect(timestampOf(id)).toBe(5_000);
      previous = id;
    }
  });

  it('increments the counter by one within a millisecond', () => {
    const generator = new UuidV7Generator();
    const first = generator.next(42);
    expect(counterOf(generator.next(42))).toBe(counterOf(first) + 1);
  });

  it('keeps increasing when the wall clock steps back, reusing the last timestamp', () => {
    const generator = new UuidV7Generator();
    const before = generator.next(10_000);
    const after = generator.next(9_000);
    expect(after > before).toBe(true);
    expect(timestampOf(after)).toBe(10_000);
  });

  it('reseeds the counter when the millisecond advances, leaving headroom below 2^41', () => {
    const generator = new UuidV7Generator(constantFill(0xff));
    generator.next(1);
    const id = generator.next(2);
    expect(counterOf(id)).toBe(2 ** 41 - 1);
  });

  it('advances the timestamp when the counter overflows', () => {
    const generator = new UuidV7Generator(constantFill(0xff), 42);
    const first = generator.next(7);
    expect(counterOf(first)).toBe(2 ** 42 - 1);
    const second = generator.next(7);
    expect(second > first).toBe(true);
    expect(timestampOf(second)).toBe(8);
  });

  it('clamps timestamps outside the 48-bit range and non-finite times', () => {
    const generator = new UuidV7Generator();
    expect(timestampOf(generator.next(-5))).toBe(0);
    expect(timestampOf(new UuidV7Generator().next(Number.NaN))).toBe(0);
    expect(timestampOf(new UuidV7Generator().next(2 ** 60))).toBe(2 ** 48 - 1);
  });

  it('draws the last 32 bits from the random source', () => {
    const id = new UuidV7Generator(constantFill(0xab)).next(1);
    expect(id.endsWith('abababab')).toBe(true);
  });
});

describe('uuidV7', () => {
  it('is increasing across calls of the process-wide generator, even for a stepped-back time', () => {
    const ids = [uuidV7(), uuidV7(), uuidV7(0), uuidV7()];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
  });

  it('uses Date.now() by default', () => {
    const before = Date.now();
    const ts = timestampOf(uuidV7());
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(Date.now() + 1);
  });
});

import { canonicalJson } from './canonical-json';
import { jsonStringBytes, numberLength } from './json-text-size';
import { measure } from './measure';

const sizeOf = (value: unknown) => Buffer.byteLength(canonicalJson(value), 'utf8');

describe('jsonStringBytes', () => {
  it('counts every BMP code unit as Buffer.byteLength(JSON.stringify(unit)), and -1 for a lone surrogate', () => {
    for (let c = 0; c < 0x10000; c++) {
      const s = String.fromCharCode(c);
      const expected = s.isWellFormed() ? Buffer.byteLength(JSON.stringify(s), 'utf8') : -1;
      if (jsonStringBytes(s) !== expected) throw new Error(`U+${c.toString(16)}: ${jsonStringBytes(s)} ≠ ${expected}`);
    }
  });

  it.each([
    ['', 2],
    ['plain ascii', 13],
    ['"quoted" \\ back/slash', 26],
    ['\b\t\n\f\r', 12],
    ['\u0000\u0001\u001f\u007f', 21],
    ['é€', 7],
    ['😀', 6],
    ['a😀b\u{10ffff}', 12],
    ['\u2028\u2029', 8],
  ])('counts %j as %i bytes, like JSON.stringify', (s, bytes) => {
    expect(jsonStringBytes(s)).toBe(bytes);
    expect(jsonStringBytes(s)).toBe(Buffer.byteLength(JSON.stringify(s), 'utf8'));
  });

  it.each(['\ud800', '\udc00', 'a\ud83d', '\ude00a', 'x\ud83d\ude00\ud800', '\ud83d\ud83d\ude00', '\udbff\u0041'])(
    'returns -1 for %j, which holds a lone surrogate',
    (s) => {
      expect(jsonStringBytes(s)).toBe(-1);
    },
  );
});

describe('numberLength', () => {
  it('equals String(n).length for integers around every power of ten and the 32-bit edges', () => {
    const numbers = [0, -0, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    for (let p = 1; p <= 1e22; p *= 10) numbers.push(p - 1, p, p + 1, -p + 1, -p, -p - 1);
    for (const n of numbers) expect([n, numberLength(n)]).toEqual([n, String(n).length]);
  });

  it('equals String(n).length for fractions, exponents and extremes', () => {
    for (const n of [0.5, -0.25, 1e-7, 1e21, 1e23, 0.1 + 0.2, 5e-324, -5e-324, Number.MAX_VALUE, 1 / 3, -1.5e-300]) {
      expect([n, numberLength(n)]).toEqual([n, String(n).length]);
    }
  });

  it('is -1 for NaN and the infinities', () => {
    expect(numberLength(NaN)).toBe(-1);
    expect(numberLength(Infinity)).toBe(-1);
    expect(numberLength(-Infinity)).toBe(-1);
  });

  it('lets measure count numbers exactly', () => {
    const numbers = [0, -0, 7, -7, 10, 99, 100, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 0.1, 1e21, -1e-7];
    expect(measure(numbers, 1000)).toEqual({ exceeded: false, bytes: sizeOf(numbers) });
  });
});

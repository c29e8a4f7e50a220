import { canonicalJson } from './canonical-json';
import { jsonStringBytes, numberLength, sortedOrder } from './json-walker';
import { measure, measureJson } from './measure';
import { JsonError } from './json.errors';
import { expectExceededBelow } from './testing/measure-fixtures';
import { thrown as thrownBy } from '../shared/testing/thrown';

const sizeOf = (value: unknown) => Buffer.byteLength(canonicalJson(value), 'utf8');

/** Canonical JSON written independently: JSON.stringify over recursively sorted copies. */
function reference(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) out[key] = sorted((v as Record<string, unknown>)[key]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sorted(value));
}

const thrown = (run: () => unknown) => thrownBy(run, JsonError);

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

describe('sortedOrder', () => {
  const reference = (keys: string[]) => keys.map((_, i) => i).sort((a, b) => (keys[a] < keys[b] ? -1 : 1));

  it('is null for keys already in UTF-16 code-unit order, and for fewer than two keys', () => {
    expect(sortedOrder([])).toBeNull();
    expect(sortedOrder(['z'])).toBeNull();
    expect(sortedOrder(['1', '10', '9', 'a', 'b\u00e9', '\u{10000}', '\uffff'])).toBeNull();
  });

  it('sorts by UTF-16 code units, for few keys (insertion sort) and many (built-in sort)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const alphabet = ['a', 'b', 'Z', '0', '9', 'é', '\uffff', '\u{10000}', '\ud7ff', '_'];
    for (const n of [2, 3, 8, 24, 25, 40, 200]) {
      for (let round = 0; round < 20; round++) {
        const keys = new Set<string>();
        while (keys.size < n) {
          let key = '';
          for (let i = Math.floor(random() * 4); i >= 0; i--) key += alphabet[Math.floor(random() * alphabet.length)];
          keys.add(key);
        }
        const list = [...keys];
        const order = sortedOrder(list);
        expect(order ?? list.map((_, i) => i)).toEqual(reference(list));
      }
    }
  });

  it('sorts keys that arrive in reverse order', () => {
    expect(sortedOrder(['c', 'b', 'a'])).toEqual([2, 1, 0]);
    const many = Array.from({ length: 100 }, (_, i) => `k${String(99 - i).padStart(3, '0')}`);
    expect(sortedOrder(many)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
  });
});

describe('objects sharing a shape (the same keys in the same order)', () => {
  const hit = (i: number) => ({ title: `t${i} é`, id: i, 'ké\n"y': [i, 'x'], '😀': null, a: i % 2 === 0 });

  it('are written and measured exactly, each time', () => {
    const value = { hits: Array.from({ length: 50 }, (_, i) => hit(i)), other: { b: 1, a: 2 } };
    const text = canonicalJson(value);
    expect(text).toBe(reference(value));
    const bytes = Buffer.byteLength(text, 'utf8');
    expect(measure(value, bytes)).toEqual({ exceeded: false, bytes });
    expect(measure(value, bytes - 1)).toEqual({ exceeded: true, bytes });
    expectExceededBelow(value, bytes, 97);
  });

  it('share keys but not values: members whose value is undefined leave the shape', () => {
    const value = [
      { b: 1, a: 2, c: 3 },
      { b: 1, a: undefined, c: 3 },
      { b: undefined, a: 2, c: 3 },
      { b: 1, a: 2, c: 3 },
      { b: 1, a: 2, c: undefined },
    ];
    expect(canonicalJson(value)).toBe('[{"a":2,"b":1,"c":3},{"b":1,"c":3},{"a":2,"c":3},{"a":2,"b":1,"c":3},{"a":2,"b":1}]');
    expect(measure(value, 1000).bytes).toBe(sizeOf(value));
  });

  it('report an accessor of any object of the shape, in sorted order, without calling it', () => {
    const getter = jest.fn(() => 1);
    const withGetter = { z: NaN, a: 1 } as Record<string, unknown>;
    Object.defineProperty(withGetter, 'a', { get: getter, enumerable: true });
    const value = [{ z: 1, a: 1 }, { z: 2, a: 2 }, withGetter];
    for (const run of [() => canonicalJson(value), () => measure(value, 1000)]) {
      expect(thrown(run).details).toEqual({ path: ['2', 'a'], kind: 'accessor' });
    }
    expect(getter).not.toHaveBeenCalled();
  });

  it('report a lone surrogate in a key of every object of the shape with the path of that object', () => {
    const value = [{ b: 1, ['\ud800']: 2 }, { b: 1, ['\ud800']: 2 }];
    for (const run of [() => canonicalJson(value), () => measure(value, 1000)]) {
      const error = thrown(run);
      expect(error.code).toBe('invalid_utf8');
      expect(error.details).toEqual({ path: ['0'] });
    }
    const later = [{ b: 1, a: 2 }, { b: 1, a: 2, ['\udc00']: 3 }];
    expect(thrown(() => measure(later, 1000)).details).toEqual({ path: ['1'] });
    expect(thrown(() => canonicalJson(later)).details).toEqual({ path: ['1'] });
  });

  it('report the path through sorted keys of a shaped object', () => {
    const value = [{ b: 1, a: 2 }, { b: [0, NaN], a: 2 }];
    expect(thrown(() => measure(value, 1000)).details).toEqual({ path: ['1', 'b', '1'], kind: 'non_finite_number' });
    expect(thrown(() => canonicalJson(value)).details).toEqual({ path: ['1', 'b', '1'], kind: 'non_finite_number' });
  });

  it('are told apart when many shapes begin with the same key', () => {
    const value = Array.from({ length: 40 }, (_, i) => {
      const object: Record<string, number> = { id: i };
      object[`k${i % 7}`] = i;
      object[`j${i % 5}`] = -i;
      return object;
    });
    expect(canonicalJson(value)).toBe(reference(value));
    expect(measure(value, 10_000).bytes).toBe(sizeOf(value));
  });

  it('include objects with more keys than a shape holds, sorted or not', () => {
    const sorted: Record<string, number> = {};
    const unsorted: Record<string, number> = {};
    for (let i = 0; i < 100; i++) sorted[`k${String(i).padStart(3, '0')}`] = i;
    for (let i = 99; i >= 0; i--) unsorted[`k${i}`] = i;
    const value = [sorted, unsorted, sorted, unsorted];
    expect(canonicalJson(value)).toBe(reference(value));
    expect(measure(value, 100_000).bytes).toBe(sizeOf(value));
  });

  it('count the steps of scanning a shape’s keys once', () => {
    const value = Array.from({ length: 100 }, () => ({ bbbbbbbbbb: 1, aaaaaaaaaa: 2 }));
    const meter = { steps: 0 };
    measureJson(value, 100_000, meter);
    // 1 array + 100 objects + 200 numbers visited, 200 keys enumerated, 20 key units scanned once
    expect(meter.steps).toBe(1 + 100 + 200 + 200 + 20);
  });
});

import { canonicalJson } from './canonical-json';
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

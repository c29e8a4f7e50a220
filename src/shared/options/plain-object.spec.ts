import { isPlainObject, isSafeIntegerAtLeast } from './plain-object';

describe('isPlainObject', () => {
  it('accepts object literals and null-prototype objects', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
  });

  it('refuses arrays, class instances, functions, null and primitives', () => {
    class Options {}
    for (const value of [[], new Options(), new Map(), () => {}, null, undefined, 1, 'x', Object.create({})]) {
      expect(isPlainObject(value)).toBe(false);
    }
  });
});

describe('isSafeIntegerAtLeast', () => {
  it('accepts safe integers at or above the minimum only', () => {
    expect(isSafeIntegerAtLeast(0, 0)).toBe(true);
    expect(isSafeIntegerAtLeast(Number.MAX_SAFE_INTEGER, 1)).toBe(true);
    for (const value of [-1, 0.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1, '1', 1n, null]) {
      expect(isSafeIntegerAtLeast(value, 0)).toBe(false);
    }
    expect(isSafeIntegerAtLeast(0, 1)).toBe(false);
  });
});

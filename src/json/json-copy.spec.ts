import { hasEscapedNul } from './escaped-nul';
import { deepFreeze, frozenJsonCopy, frozenJsonParse } from './json-copy';
import { JsonError } from './json.errors';

describe('deepFreeze', () => {
  it('freezes every object and array reachable through data properties and returns the value', () => {
    const value = { a: [{ b: { c: 1 } }], d: { e: [] as unknown[] } };
    expect(deepFreeze(value)).toBe(value);
    for (const part of [value, value.a, value.a[0], value.a[0].b, value.d, value.d.e]) expect(Object.isFrozen(part)).toBe(true);
  });

  it('calls no getter, survives cycles and a 1,000,000-deep array', () => {
    const getter = jest.fn(() => ({}));
    const cyclic: Record<string, unknown> = Object.defineProperty({}, 'lazy', { get: getter, enumerable: true });
    cyclic.self = cyclic;
    deepFreeze(cyclic);
    expect(getter).not.toHaveBeenCalled();
    expect(Object.isFrozen(cyclic)).toBe(true);
    let deep: unknown[] = [];
    const root = deep;
    for (let i = 0; i < 1_000_000; i++) deep = (deep[0] = []) as unknown[];
    deepFreeze(root);
    expect(Object.isFrozen(deep)).toBe(true);
  });
});

describe('frozenJsonCopy', () => {
  it('is a deep-frozen copy sharing nothing with its input', () => {
    const input = { parts: [{ text: 'hi' }], n: -0 };
    const copy = frozenJsonCopy(input);
    expect(copy).toEqual({ parts: [{ text: 'hi' }], n: 0 });
    expect(copy.parts).not.toBe(input.parts);
    expect(Object.isFrozen(copy.parts[0])).toBe(true);
    input.parts.push({ text: 'later' });
    expect(copy.parts).toHaveLength(1);
  });

  it('keeps "__proto__" an own key and refuses what JSON cannot hold with JsonError', () => {
    const copy = frozenJsonCopy(JSON.parse('{"__proto__": {"x": 1}}') as object);
    expect(Object.getOwnPropertyNames(copy)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(() => frozenJsonCopy({ at: new Date(0) })).toThrow(JsonError);
    expect(() => frozenJsonCopy([1n])).toThrow(JsonError);
  });

  it('frozenJsonParse freezes what it parses', () => {
    const parsed = frozenJsonParse('{"a":[1,{"b":2}]}') as { a: [number, object] };
    expect(Object.isFrozen(parsed.a[1])).toBe(true);
  });
});

describe('hasEscapedNul', () => {
  it.each([
    [{ s: 'a\u0000b' }, true],
    [{ 'k\u0000': 1 }, true],
    [{ s: '\\u0000' }, false],
    [{ s: '\\\u0000' }, true],
    [{ s: 'plain' }, false],
  ])('%j → %s', (value, expected) => {
    expect(hasEscapedNul(JSON.stringify(value))).toBe(expected);
  });
});

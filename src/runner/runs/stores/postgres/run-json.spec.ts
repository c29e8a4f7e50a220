import { decodeJson, encodeJson } from './run-json';

describe('run JSON in jsonb', () => {
  it.each([
    [{ type: 'terminal', status: 'completed' }],
    [{ type: 'terminal', status: 'cancelled', cancelled: 'a\u0000b' }],
    [{ 'k\u0000': ['\u0000', '\\u0000', { n: 1.5e-7, big: 1e21 }] }],
    [{ s: '\\u0000 is not a NUL', e: 'é😀' }],
  ])('round-trips %j', (value) => {
    const text = encodeJson(value);
    expect(text).not.toContain('\u0000');
    expect(decodeJson(text)).toEqual(value);
    expect(Object.isFrozen(decodeJson(text))).toBe(true);
  });

  it('keeps a value jsonb can hold as its canonical object text', () => {
    expect(encodeJson({ b: 1, a: 'x' })).toBe('{"a":"x","b":1}');
    expect(encodeJson({ a: '\u0000' }).startsWith('"')).toBe(true);
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => encodeJson({ s: '\ud800' })).toThrow();
  });
});

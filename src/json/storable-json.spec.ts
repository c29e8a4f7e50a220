import { storableJsonText } from './storable-json';

describe('storableJsonText', () => {
  it('gives the canonical text of what the stores keep, escaped backslashes before a u0000 included', () => {
    expect(storableJsonText({ b: 'é😀', a: [1, null] })).toBe('{"a":[1,null],"b":"é😀"}');
    expect(storableJsonText('\\u0000')).toBe('"\\\\u0000"');
  });

  it.each([
    ['U+0000 in a string', 'a\u0000b'],
    ['U+0000 in a key', { ['k\u0000']: 1 }],
    ['U+0000 deep down', [{ a: [{ b: '\u0000' }] }]],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate in a key', { ['\udc00']: 1 }],
    ['a function', () => 1],
    ['a class instance', new Date(0)],
    ['NaN', Number.NaN],
  ])('refuses %s', (_what, value) => {
    expect(storableJsonText(value)).toBeUndefined();
  });
});

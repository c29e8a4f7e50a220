import { isValidId, MAX_ID_BYTES } from './id-rule';

describe('the id rule', () => {
  it.each([['a'], ['support-agent'], ['__proto__'], ['é'.repeat(128)], ['x'.repeat(MAX_ID_BYTES)], ['日本語']])('accepts %j', (id) => {
    expect(isValidId(id)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['over 256 bytes', 'x'.repeat(MAX_ID_BYTES + 1)],
    ['over 256 bytes in UTF-8', 'é'.repeat(129)],
    ['a lone surrogate', 'a\ud800'],
    ['NUL', 'a\u0000b'],
    ['a newline', 'a\nb'],
    ['an ANSI escape', 'a\u001b[31mFAKE'],
    ['DEL', 'a\u007f'],
    ['a C1 control', 'a\u0085b'],
    ['a C1 CSI', '\u009b31m'],
  ])('refuses %s', (_, id) => {
    expect(isValidId(id)).toBe(false);
  });

  it.each([[1], [null], [undefined], [{}], [['a']]])('refuses the non-string %j', (value) => {
    expect(isValidId(value)).toBe(false);
  });

  it('takes a smaller byte bound', () => {
    expect(isValidId('x'.repeat(128), 128)).toBe(true);
    expect(isValidId('x'.repeat(129), 128)).toBe(false);
  });
});

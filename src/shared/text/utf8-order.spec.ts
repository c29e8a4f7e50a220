import fc from 'fast-check';
import { compareUtf8 } from './utf8-order';

const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

describe('compareUtf8', () => {
  it('orders as the UTF-8 bytes do, also where UTF-16 code units disagree', () => {
    expect(['\u{1F600}', '\uFFFD', 'a', ''].sort(compareUtf8)).toEqual(['', 'a', '\uFFFD', '\u{1F600}']);
    expect(compareUtf8('\uE000', '\u{10000}')).toBe(-1);
    expect(compareUtf8('ab', 'a')).toBe(1);
    expect(compareUtf8('x', 'x')).toBe(0);
  });

  it('agrees with Buffer.compare of the UTF-8 bytes on any well-formed strings', () => {
    const text = fc.string({ unit: 'binary', maxLength: 8 });
    fc.assert(fc.property(text, text, (a, b) => compareUtf8(a, b) === bytewise(a, b)), { numRuns: 2000 });
  });
});

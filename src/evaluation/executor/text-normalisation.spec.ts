import { normaliseText, tokensOf } from './text-normalisation';

describe('normaliseText (spec 05 §7 response_match)', () => {
  it('applies NFKC: full-width letters and ligatures become their plain forms', () => {
    expect(normaliseText('Ｈｅｌｌｏ')).toBe('hello');
    expect(normaliseText('ﬁne')).toBe('fine');
  });

  it('lower-cases after NFKC', () => {
    expect(normaliseText('ÉCOLE Straße')).toBe('école straße');
  });

  it('removes every Unicode punctuation character, inside words too, and keeps symbols', () => {
    expect(normaliseText('¡Hola! «Bonjour» — ça va?')).toBe('hola bonjour ça va');
    expect(normaliseText("don't well-known")).toBe('dont wellknown');
    expect(normaliseText('$100 + 5 = 105')).toBe('$100 + 5 = 105');
  });

  it('collapses every run of whitespace (tabs, newlines, no-break spaces) to one space and trims', () => {
    expect(normaliseText('  Ｈｅｌｌｏ,\n\t World!\u00a0\u3000 ')).toBe('hello world');
  });

  it('gives the empty text for punctuation and whitespace only', () => {
    expect(normaliseText(' ?!… \n')).toBe('');
  });

  it('splits a normalised text into tokens, none for the empty text', () => {
    expect(tokensOf('the cat sat')).toEqual(['the', 'cat', 'sat']);
    expect(tokensOf('')).toEqual([]);
  });
});

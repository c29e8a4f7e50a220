import { responseMatchScore } from './response-match';

describe('responseMatchScore (spec 05 §7)', () => {
  describe('equal after normalisation', () => {
    it('scores 1 in both modes', () => {
      expect(responseMatchScore('Hello, World!', 'hello   world', 'rouge_1')).toBe(1);
      expect(responseMatchScore('Hello, World!', 'hello   world', 'exact')).toBe(1);
    });

    it('scores 1 for two texts that are both empty once normalised', () => {
      expect(responseMatchScore('', '...', 'rouge_1')).toBe(1);
      expect(responseMatchScore('  ', '', 'exact')).toBe(1);
    });
  });

  describe('exact', () => {
    it('scores 0 for any difference, however small', () => {
      expect(responseMatchScore('the cat sat', 'the cat sat down', 'exact')).toBe(0);
      expect(responseMatchScore('the cat sat', 'the cat sits', 'exact')).toBe(0);
    });
  });

  describe('rouge_1 (worked by hand)', () => {
    it('candidate "the cat sat on the mat" against "the cat is on the mat": overlap 5 of 6 and 6 → F = 5/6', () => {
      // the: min(2,2)=2, cat 1, on 1, mat 1, sat 0 → 5; P = 5/6, R = 5/6
      expect(responseMatchScore('The cat sat on the mat.', 'the cat is on the mat', 'rouge_1')).toBeCloseTo(5 / 6, 12);
    });

    it('candidate "The cat sat" against "the cat sat down": P = 1, R = 3/4 → F = 6/7', () => {
      expect(responseMatchScore('The cat sat', 'the cat sat down', 'rouge_1')).toBeCloseTo(6 / 7, 12);
    });

    it('counts repeated tokens by the smaller count: "a a a b" against "a b b" → overlap 2, P = 1/2, R = 2/3, F = 4/7', () => {
      expect(responseMatchScore('a a a b', 'a b b', 'rouge_1')).toBeCloseTo(4 / 7, 12);
    });

    it('is symmetric in F although P and R swap', () => {
      expect(responseMatchScore('a b b', 'a a a b', 'rouge_1')).toBeCloseTo(4 / 7, 12);
    });

    it('compares normalised tokens: punctuation and case do not count against a token', () => {
      // candidate tokens: sunny in oslo today; reference: it is sunny in oslo → overlap 3, P = 3/4, R = 3/5, F = 2/3
      expect(responseMatchScore('Sunny in OSLO, today!', 'It is sunny in Oslo.', 'rouge_1')).toBeCloseTo(2 / 3, 12);
    });

    it('scores 0 without a shared token', () => {
      expect(responseMatchScore('red green', 'blue', 'rouge_1')).toBe(0);
    });

    it('scores 0 when either side is empty after normalisation and the other is not', () => {
      expect(responseMatchScore('', 'something', 'rouge_1')).toBe(0);
      expect(responseMatchScore('!!!', 'something', 'rouge_1')).toBe(0);
      expect(responseMatchScore('something', ' … ', 'rouge_1')).toBe(0);
    });
  });
});

import { compareQueued, effectiveRank, fairTags, nextAgingAt } from './fair-share';

describe('fair share and priorities (spec 09 §3, §4)', () => {
  it('start tags: max(V, F); finish adds cost/weight; cost 0 tags as 1; an idle tenant starts at V', () => {
    expect(fairTags(10, undefined, 4, 2)).toEqual({ start: 10, finish: 12 });
    expect(fairTags(10, 15, 4, 2)).toEqual({ start: 15, finish: 17 });
    expect(fairTags(10, 3, 0, 1)).toEqual({ start: 10, finish: 11 });
  });

  it('the effective class rises one step per aging period, up to high; Infinity turns aging off', () => {
    expect(effectiveRank(0, 9_999, 10_000)).toBe(0);
    expect(effectiveRank(0, 10_000, 10_000)).toBe(1);
    expect(effectiveRank(0, 20_000, 10_000)).toBe(2);
    expect(effectiveRank(1, 50_000, 10_000)).toBe(2);
    expect(effectiveRank(0, 1e12, Infinity)).toBe(0);
    expect(nextAgingAt(0, 100, 100, 10_000)).toBe(10_100);
    expect(nextAgingAt(0, 100, 10_100, 10_000)).toBe(20_100);
    expect(nextAgingAt(0, 100, 20_100, 10_000)).toBe(Infinity);
    expect(nextAgingAt(1, 0, 0, Infinity)).toBe(Infinity);
  });

  it('orders by class descending, then start tag, then sequence', () => {
    expect(compareQueued(2, 50, 9, 1, 0, 0)).toBeLessThan(0);
    expect(compareQueued(1, 3, 9, 1, 4, 0)).toBeLessThan(0);
    expect(compareQueued(1, 3, 1, 1, 3, 2)).toBeLessThan(0);
    expect(compareQueued(1, 3, 2, 1, 3, 2)).toBe(0);
  });
});

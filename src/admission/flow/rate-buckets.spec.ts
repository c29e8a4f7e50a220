import { fullBuckets, isFull, rateWaitMs, refill, resolveRate, settleCost, take, type ResolvedRate } from './rate-buckets';

const rateOf = (raw: Parameters<typeof resolveRate>[0]): ResolvedRate => {
  const rate = resolveRate(raw);
  if (typeof rate === 'string') throw new Error(`invalid ${rate}`);
  return rate;
};

describe('rate buckets (spec 09 §5)', () => {
  it('defaults: burst 1, burstCost one second of costPerMinute; buckets start full', () => {
    const rate = rateOf({ requestsPerMinute: 60, costPerMinute: 600 });
    expect(rate).toEqual({ requestsPerMs: 0.001, burst: 1, costPerMs: 0.01, burstCost: 10 });
    expect(fullBuckets(rate, 5)).toEqual({ requests: 1, cost: 10, at: 5 });
  });

  it('names the first invalid key', () => {
    expect(resolveRate({ requestsPerMinute: 0 })).toBe('requestsPerMinute');
    expect(resolveRate({ costPerMinute: Infinity })).toBe('costPerMinute');
    expect(resolveRate({ requestsPerMinute: 1, burst: 1.5 })).toBe('burst');
    expect(resolveRate({ requestsPerMinute: 1, burst: 0 })).toBe('burst');
    expect(resolveRate({ costPerMinute: 1, burstCost: -1 })).toBe('burstCost');
    expect(resolveRate({ requestsPerMinute: '60' as unknown as number })).toBe('requestsPerMinute');
  });

  it('a request needs one request token: the wait is the refill time of the missing part, rounded up', () => {
    const rate = rateOf({ requestsPerMinute: 60, burst: 2 });
    const levels = fullBuckets(rate, 0);
    take(rate, levels, 1);
    take(rate, levels, 1);
    expect(rateWaitMs(rate, levels, 1)).toBe(1000);
    refill(rate, levels, 400);
    expect(rateWaitMs(rate, levels, 1)).toBe(600);
    refill(rate, levels, 999.5);
    expect(rateWaitMs(rate, levels, 1)).toBe(1);
    refill(rate, levels, 1000);
    expect(rateWaitMs(rate, levels, 1)).toBe(0);
    refill(rate, levels, 60_000);
    expect(levels.requests).toBe(2);
  });

  it('a request needs min(cost, burstCost) cost tokens and takes its whole cost (the bucket may go below zero)', () => {
    const rate = rateOf({ costPerMinute: 6000 }); // 100 per second, burstCost 100
    const levels = fullBuckets(rate, 0);
    expect(rateWaitMs(rate, levels, 250)).toBe(0);
    take(rate, levels, 250);
    expect(levels.cost).toBe(-150);
    expect(rateWaitMs(rate, levels, 250)).toBe(2500); // back to a full bucket: 250 tokens at 0.1 per ms
    expect(rateWaitMs(rate, levels, 10)).toBe(1600);
  });

  it('settle gives back the difference, capped at the capacity, and records debt', () => {
    const rate = rateOf({ costPerMinute: 6000 });
    const levels = fullBuckets(rate, 0);
    take(rate, levels, 80);
    settleCost(rate, levels, 80, 500);
    expect(levels.cost).toBe(-400);
    settleCost(rate, levels, 1000, 0);
    expect(levels.cost).toBe(100);
  });

  it('isFull is true only once both buckets refilled; a clock going back refills nothing', () => {
    const rate = rateOf({ requestsPerMinute: 60, costPerMinute: 60 });
    const levels = fullBuckets(rate, 1000);
    take(rate, levels, 1);
    refill(rate, levels, 500);
    expect(levels).toEqual({ requests: 0, cost: 0, at: 1000 });
    expect(isFull(rate, levels, 1999)).toBe(false);
    expect(isFull(rate, levels, 2000)).toBe(true);
  });
});

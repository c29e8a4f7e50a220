import { fullBuckets, resolveRate, type ResolvedRate } from './rate-buckets';
import { oversizeScope, refusalOf, takeTokens, type ScopeCheck } from './scope-capacity';

const rate = resolveRate({ requestsPerMinute: 60 }) as ResolvedRate;
const scope = (name: 'agent' | 'tenant' | 'global', held: number, limit: number, costHeld = 0, costLimit = Infinity, rated = false): ScopeCheck => [
  { scope: name, limit, costLimit, rate: rated ? rate : undefined },
  { held, costHeld, buckets: rated ? fullBuckets(rate, 0) : undefined },
];

describe('one capacity decision over three scopes (spec 09 §2, §8)', () => {
  it('has capacity when every scope has room for one more permit and its cost', () => {
    expect(refusalOf([scope('agent', 1, 2), scope('tenant', 0, 1), scope('global', 5, 6)], 1, 0)).toBeUndefined();
  });

  it('names the first refusing scope in the order agent, tenant, global', () => {
    expect(refusalOf([scope('agent', 2, 2), scope('tenant', 1, 1), scope('global', 6, 6)], 1, 0)).toEqual({ kind: 'count', scope: 'agent' });
    expect(refusalOf([scope('agent', 0, 2), scope('tenant', 1, 1), scope('global', 6, 6)], 1, 0)).toEqual({ kind: 'count', scope: 'tenant' });
    expect(refusalOf([scope('agent', 0, 2), scope('global', 6, 6)], 1, 0)).toEqual({ kind: 'count', scope: 'global' });
  });

  it('a cost refusal needs held + cost over the limit; exactly at the limit fits', () => {
    expect(refusalOf([scope('agent', 0, 9, 6, 10)], 4, 0)).toBeUndefined();
    expect(refusalOf([scope('agent', 0, 9, 6, 10)], 4.5, 0)).toEqual({ kind: 'cost', scope: 'agent' });
  });

  it('a permit or cost refusal is named before a rate refusal of an earlier scope', () => {
    const agent = scope('agent', 0, 9, 0, Infinity, true);
    takeTokens([agent], 1);
    expect(refusalOf([agent, scope('global', 1, 1)], 1, 0)).toEqual({ kind: 'count', scope: 'global' });
    expect(refusalOf([agent, scope('global', 0, 1)], 1, 250)).toEqual({ kind: 'rate', scope: 'agent', retryAfterMs: 750 });
  });

  it('oversize: a cost alone above a scope cost limit', () => {
    expect(oversizeScope([scope('agent', 0, 1, 0, 100), scope('tenant', 0, 1, 0, 10)], 50)).toBe('tenant');
    expect(oversizeScope([scope('agent', 0, 1, 0, 100)], 100)).toBeUndefined();
  });
});

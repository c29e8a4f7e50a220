import fc from 'fast-check';
import { rankByTokenOverlap, wordTokens, type RankableEntry } from './token-overlap-ranking';

const entry = (id: string, content: string, timestamp_ms: number): RankableEntry => ({
  id,
  content,
  contentBytes: Buffer.byteLength(content),
  author: 'user',
  timestamp_ms,
  tokens: wordTokens(content),
});

const WIDE = { limit: 100, maxResultBytes: 1 << 20 };

describe('§1.3 in-memory ranking by token overlap', () => {
  it('splits lower-cased words on anything but letters, marks and digits', () => {
    expect([...wordTokens('Hello, WORLD! hello-world 42x Émile'.normalize('NFD'))]).toEqual(['hello', 'world', '42x', 'émile'.normalize('NFD')]);
  });

  it('scores distinct query words found / distinct query words, best first, leaving out entries without any', () => {
    const entries = [entry('a', 'the red car', 1), entry('b', 'a red and blue car', 2), entry('c', 'nothing here', 3)];
    const hits = rankByTokenOverlap(entries, 'Red BLUE car car', WIDE);
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ['b', 1],
      ['a', 2 / 3],
    ]);
    expect(hits[0]).toEqual({ id: 'b', content: 'a red and blue car', author: 'user', timestamp_ms: 2, score: 1 });
  });

  it('breaks ties newest first, then by id', () => {
    const entries = [entry('b', 'apple', 5), entry('a', 'apple', 5), entry('c', 'apple', 9), entry('d', 'apple', 1)];
    expect(rankByTokenOverlap(entries, 'apple', WIDE).map((hit) => hit.id)).toEqual(['c', 'a', 'b', 'd']);
  });

  it('finds nothing for a query without words', () => {
    expect(rankByTokenOverlap([entry('a', 'x', 1)], ' ,.!? ', WIDE)).toEqual([]);
  });

  it('applies limit and maxResultBytes after ranking, to its prefix', () => {
    // the best hit is large: a bound before ranking would return the small ones instead
    const entries = [entry('small1', 'kiwi', 1), entry('big', `kiwi mango ${'z'.repeat(100)}`, 2), entry('small2', 'kiwi', 3)];
    expect(rankByTokenOverlap(entries, 'kiwi mango', { limit: 2, maxResultBytes: 1000 }).map((hit) => hit.id)).toEqual(['big', 'small2']);
    expect(rankByTokenOverlap(entries, 'kiwi mango', { limit: 10, maxResultBytes: 50 })).toEqual([]);
    expect(rankByTokenOverlap(entries, 'kiwi mango', { limit: 10, maxResultBytes: 115 }).map((hit) => hit.id)).toEqual(['big', 'small2']);
  });

  it('property: hits are sorted by (score desc, timestamp desc, id), within both bounds, and a prefix of the unbounded ranking', () => {
    const word = fc.constantFrom('a', 'b', 'c', 'd');
    const arbitraryEntries = fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 4 }), words: fc.array(word, { maxLength: 5 }), ts: fc.integer({ min: 0, max: 5 }) }), {
      selector: (e) => e.id,
      maxLength: 30,
    });
    fc.assert(
      fc.property(arbitraryEntries, fc.array(word, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 40 }), (raw, query, limit, maxResultBytes) => {
        const entries = raw.map((e) => entry(e.id, e.words.join(' '), e.ts));
        const all = rankByTokenOverlap(entries, query.join(' '), WIDE);
        const hits = rankByTokenOverlap(entries, query.join(' '), { limit, maxResultBytes });
        expect(all.slice(0, hits.length)).toEqual(hits);
        expect(hits.length).toBeLessThanOrEqual(limit);
        expect(hits.reduce((sum, hit) => sum + Buffer.byteLength(hit.content), 0)).toBeLessThanOrEqual(maxResultBytes);
        for (let i = 1; i < all.length; i++) {
          const [p, q] = [all[i - 1], all[i]];
          expect(p.score > q.score || (p.score === q.score && (p.timestamp_ms > q.timestamp_ms || (p.timestamp_ms === q.timestamp_ms && p.id < q.id)))).toBe(true);
        }
        const distinct = new Set(query);
        for (const hit of all) expect(hit.score).toBe([...distinct].filter((w) => wordTokens(hit.content).has(w)).length / distinct.size);
      }),
    );
  });
});

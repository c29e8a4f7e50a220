import type { MemoryHit } from '../services.types';

/** A word: a run of letters, combining marks and digits. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** The distinct lower-cased words of `text`. */
export function wordTokens(text: string): ReadonlySet<string> {
  return new Set(text.toLowerCase().match(WORD) ?? []);
}

/** What the ranking reads of a stored entry. */
export interface RankableEntry {
  readonly id: string;
  readonly content: string;
  readonly contentBytes: number;
  readonly author: string;
  readonly timestamp_ms: number;
  /** {@link wordTokens} of the content, computed once when the entry is stored. */
  readonly tokens: ReadonlySet<string>;
}

/** How many hits, and how many content bytes together, a search may return. */
export interface HitBounds {
  readonly limit: number;
  readonly maxResultBytes: number;
}

/**
 * The in-memory ranking (spec 07 §1.3): score = distinct lower-cased query words found in the entry
 * / distinct query words; entries scoring 0 are left out; ties newest first (`timestamp_ms`
 * descending), then by id. The bounds apply after ranking, to its prefix: at most `limit` hits, and
 * hits are taken in rank order while their content fits `maxResultBytes` (the first that does not
 * fit ends the list). A query without words finds nothing.
 */
export function rankByTokenOverlap(entries: Iterable<RankableEntry>, query: string, bounds: HitBounds): MemoryHit[] {
  const words = [...wordTokens(query)];
  if (words.length === 0) return [];
  const scored: Array<{ readonly entry: RankableEntry; readonly score: number }> = [];
  for (const entry of entries) {
    let found = 0;
    for (const word of words) if (entry.tokens.has(word)) found += 1;
    if (found > 0) scored.push({ entry, score: found / words.length });
  }
  scored.sort((a, b) => b.score - a.score || b.entry.timestamp_ms - a.entry.timestamp_ms || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0));
  const hits: MemoryHit[] = [];
  let bytes = 0;
  for (const { entry, score } of scored) {
    if (hits.length >= bounds.limit || bytes + entry.contentBytes > bounds.maxResultBytes) break;
    bytes += entry.contentBytes;
    hits.push(Object.freeze({ id: entry.id, content: entry.content, author: entry.author, timestamp_ms: entry.timestamp_ms, score }));
  }
  return hits;
}

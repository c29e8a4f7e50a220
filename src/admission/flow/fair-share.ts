/** A request's class (spec 09 §4). */
export type PriorityClass = 'high' | 'normal' | 'low';

/** Classes as ranks: a larger rank is served first. */
export const CLASS_RANK: Readonly<Record<PriorityClass, number>> = Object.freeze({ low: 0, normal: 1, high: 2 });
export const HIGHEST_RANK = 2;

/**
 * The effective class of a queued request: its rank raised one step per `agingMs` waited, up to
 * `high` (spec 09 §4). `agingMs` is `Infinity` when aging is off.
 */
export function effectiveRank(rank: number, waitedMs: number, agingMs: number): number {
  if (rank >= HIGHEST_RANK || agingMs === Infinity || waitedMs < agingMs) return rank;
  return Math.min(HIGHEST_RANK, rank + Math.floor(waitedMs / agingMs));
}

/** When a request of `rank` enqueued at `enqueuedAt` next moves up a class; `Infinity` at the top or without aging. */
export function nextAgingAt(rank: number, enqueuedAt: number, now: number, agingMs: number): number {
  const current = effectiveRank(rank, now - enqueuedAt, agingMs);
  if (current >= HIGHEST_RANK || agingMs === Infinity) return Infinity;
  return enqueuedAt + (current - rank + 1) * agingMs;
}

/** The start and finish tags of a request (spec 09 §3). */
export interface FairTags {
  readonly start: number;
  readonly finish: number;
}

/**
 * Start-time fair queueing: `S = max(V, F)` and `F' = S + cost / weight`, where `V` is the start tag
 * of the last grant and `F` the flow owner's last finish tag (`undefined` for an idle tenant, which
 * starts again at `V`). A request of cost 0 is tagged as cost 1.
 */
export function fairTags(virtualTime: number, lastFinish: number | undefined, cost: number, weight: number): FairTags {
  const start = lastFinish === undefined ? virtualTime : Math.max(virtualTime, lastFinish);
  return { start, finish: start + (cost > 0 ? cost : 1) / weight };
}

/**
 * Dispatch order (spec 09 §3): effective class descending, then start tag, then sequence. Negative
 * when `a` goes first.
 */
export function compareQueued(aRank: number, aStart: number, aSeq: number, bRank: number, bStart: number, bSeq: number): number {
  return bRank - aRank || aStart - bStart || aSeq - bSeq;
}

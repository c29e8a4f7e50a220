import { isPositiveFinite } from '../../shared/options/option-rules';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';

/** Requests and cost per minute of one scope (spec 09 §5). */
export interface Rate {
  /** Refill of the request bucket; finite > 0. @default none (requests are not rated) */
  requestsPerMinute?: number;
  /** Refill of the cost bucket; finite > 0. @default none (cost is not rated) */
  costPerMinute?: number;
  /** Capacity of the request bucket; safe integer ≥ 1. @default 1 */
  burst?: number;
  /** Capacity of the cost bucket; finite > 0. @default one second's worth: `costPerMinute / 60` */
  burstCost?: number;
}

/** A validated rate: refills per millisecond and capacities; a bucket without a refill is absent. */
export interface ResolvedRate {
  readonly requestsPerMs: number | undefined;
  readonly burst: number;
  readonly costPerMs: number | undefined;
  readonly burstCost: number;
}

export const RATE_KEYS = Object.freeze(['requestsPerMinute', 'costPerMinute', 'burst', 'burstCost'] as const);

/** The resolved rate, or the name of the first invalid key. */
export function resolveRate(raw: { readonly [P in (typeof RATE_KEYS)[number]]?: unknown }): ResolvedRate | (typeof RATE_KEYS)[number] {
  const { requestsPerMinute, costPerMinute, burst = 1, burstCost } = raw;
  if (requestsPerMinute !== undefined && !isPositiveFinite(requestsPerMinute)) return 'requestsPerMinute';
  if (costPerMinute !== undefined && !isPositiveFinite(costPerMinute)) return 'costPerMinute';
  if (!isSafeIntegerAtLeast(burst, 1)) return 'burst';
  if (burstCost !== undefined && !isPositiveFinite(burstCost)) return 'burstCost';
  return Object.freeze({
    requestsPerMs: requestsPerMinute === undefined ? undefined : requestsPerMinute / 60_000,
    burst,
    costPerMs: costPerMinute === undefined ? undefined : costPerMinute / 60_000,
    burstCost: burstCost ?? (costPerMinute === undefined ? Infinity : costPerMinute / 60),
  });
}

/**
 * The two token buckets of one scope instance, as plain numbers so a cluster decision can store them:
 * tokens as of `at` (monotonic ms on the deciding clock). Buckets start full; a full pair carries no
 * information, so its holder may drop it (spec 09 §7).
 */
export interface BucketLevels {
  requests: number;
  cost: number;
  at: number;
}

/** Full buckets of `rate` as of `now`. */
export function fullBuckets(rate: ResolvedRate, now: number): BucketLevels {
  return { requests: rate.burst, cost: rate.burstCost, at: now };
}

/** Refills `levels` up to `now` (never past capacity; a clock that went back refills nothing). */
export function refill(rate: ResolvedRate, levels: BucketLevels, now: number): void {
  const elapsed = now - levels.at;
  if (!(elapsed > 0)) return;
  if (rate.requestsPerMs !== undefined) levels.requests = Math.min(rate.burst, levels.requests + elapsed * rate.requestsPerMs);
  if (rate.costPerMs !== undefined) levels.cost = Math.min(rate.burstCost, levels.cost + elapsed * rate.costPerMs);
  levels.at = now;
}

/**
 * Milliseconds (whole, rounded up) until both buckets hold what a request of `cost` needs: 1 request
 * token and `min(cost, burstCost)` cost tokens; 0 when they hold it now. Call after {@link refill}.
 */
export function rateWaitMs(rate: ResolvedRate, levels: BucketLevels, cost: number): number {
  let wait = 0;
  if (rate.requestsPerMs !== undefined && levels.requests < 1) wait = (1 - levels.requests) / rate.requestsPerMs;
  if (rate.costPerMs !== undefined) {
    const needed = Math.min(cost, rate.burstCost);
    if (levels.cost < needed) wait = Math.max(wait, (needed - levels.cost) / rate.costPerMs);
  }
  return wait > 0 ? Math.max(1, Math.ceil(wait - 1e-9)) : 0;
}

/** A grant takes 1 request token and `cost` cost tokens (the cost bucket may go below zero). */
export function take(rate: ResolvedRate, levels: BucketLevels, cost: number): void {
  if (rate.requestsPerMs !== undefined) levels.requests -= 1;
  if (rate.costPerMs !== undefined) levels.cost -= cost;
}

/** `permit.settle`: gives back `estimated − actual` (negative: debt), credit capped at the capacity. */
export function settleCost(rate: ResolvedRate, levels: BucketLevels, estimated: number, actual: number): void {
  if (rate.costPerMs !== undefined) levels.cost = Math.min(rate.burstCost, levels.cost + (estimated - actual));
}

/** Whether both buckets are full as of `now` (after a refill): the holder may forget them. */
export function isFull(rate: ResolvedRate, levels: BucketLevels, now: number): boolean {
  refill(rate, levels, now);
  return (rate.requestsPerMs === undefined || levels.requests >= rate.burst) && (rate.costPerMs === undefined || levels.cost >= rate.burstCost);
}

import type { LimitScope } from './flow-config';
import { rateWaitMs, refill, take, type BucketLevels, type ResolvedRate } from './rate-buckets';

/** The limits of one scope instance a request is admitted against. */
export interface ScopeLimits {
  readonly scope: LimitScope;
  /** Permits at once (for an adaptive agent, its effective limit); `Infinity` for none. */
  readonly limit: number;
  /** Sum of held `cost`; `Infinity` for none. */
  readonly costLimit: number;
  readonly rate: ResolvedRate | undefined;
}

/** What a scope instance holds now. `buckets` is required when the scope has a rate. */
export interface ScopeUsage {
  readonly held: number;
  readonly costHeld: number;
  readonly buckets: BucketLevels | undefined;
}

/** Why a request has no capacity now (spec 09 §2, §5, §8). */
export type Refusal =
  | { readonly kind: 'count'; readonly scope: LimitScope }
  | { readonly kind: 'cost'; readonly scope: LimitScope }
  | { readonly kind: 'rate'; readonly scope: LimitScope; readonly retryAfterMs: number };

/** One scope of a request: its limits and its usage. */
export type ScopeCheck = readonly [ScopeLimits, ScopeUsage];

/**
 * The first scope whose cost limit is below `cost` alone (refused at submit whatever the overflow),
 * in the order agent, tenant, global; `undefined` when the request can ever fit.
 */
export function oversizeScope(scopes: readonly ScopeCheck[], cost: number): LimitScope | undefined {
  for (const [limits] of scopes) if (cost > limits.costLimit) return limits.scope;
  return undefined;
}

/**
 * Whether a request of `cost` has capacity now in every scope, as one decision (spec 09 §2).
 * `scopes` are in the refusal order (agent, tenant, global). A permit or cost refusal is named before
 * a rate refusal: a `rate_limited` answer promises a time after which the request is allowed, which a
 * full scope would break. Refills the buckets to `now`.
 */
export function refusalOf(scopes: readonly ScopeCheck[], cost: number, now: number): Refusal | undefined {
  for (const [limits, usage] of scopes) {
    if (usage.held >= limits.limit) return { kind: 'count', scope: limits.scope };
    if (usage.costHeld + cost > limits.costLimit) return { kind: 'cost', scope: limits.scope };
  }
  for (const [limits, usage] of scopes) {
    if (limits.rate === undefined) continue;
    const buckets = usage.buckets as BucketLevels;
    refill(limits.rate, buckets, now);
    const waitMs = rateWaitMs(limits.rate, buckets, cost);
    if (waitMs > 0) return { kind: 'rate', scope: limits.scope, retryAfterMs: waitMs };
  }
  return undefined;
}

/** Takes a granted request's tokens from every rated scope's buckets (call after {@link refusalOf} found none). */
export function takeTokens(scopes: readonly ScopeCheck[], cost: number): void {
  for (const [limits, usage] of scopes) if (limits.rate !== undefined) take(limits.rate, usage.buckets as BucketLevels, cost);
}

import { types } from 'node:util';
import { systemClock, type Clock } from '../shared/time/clock';
import type { ErrorDetails } from '../shared/errors/agent-runtime-error';
import { optionFailureDetails, readOptions } from '../shared/options/option-reader';
import { integerIn, oneOf } from '../shared/options/option-rules';
import { TraceStoreError } from './trace-store.errors';

/** What an append does with parts the projection dropped (spec 06 §4 step 3). */
export type TraceContentPolicy = 'reject' | 'prune';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/**
 * Options of a {@link TraceStore} (spec 06 §2). Every number is a positive safe integer; unknown
 * keys are refused. Options whose default depends on others are derived after those are known.
 */
export interface TraceStoreOptions {
  /** Records held at once across all principals; ≤ 1 000 000. @default 4096 */
  maxEvents?: number;
  /** Bytes of records held at once; ≤ 1 GiB. @default 16 MiB */
  maxBytes?: number;
  /** Largest record (its JSON, cursor included); ≤ 16 MiB and ≤ `maxBytes`. @default 256 KiB */
  maxEventBytes?: number;
  /** Principals held at once; ≤ 100 000. @default 1024 */
  maxPrincipals?: number;
  /** Records one principal holds at once; ≤ `maxEvents`. @default min(1024, maxEvents) */
  maxEventsPerPrincipal?: number;
  /** Bytes one principal holds at once; `maxEventBytes`..`maxBytes`. @default min(4 MiB, maxBytes), at least maxEventBytes */
  maxBytesPerPrincipal?: number;
  /** Lifetime of a record and of a tombstone, in ms; ≤ 86 400 000. @default 300000 */
  retentionMs?: number;
  /** Interval of the prune pass, in ms; ≤ `retentionMs`. @default min(1000, retentionMs) */
  pruneIntervalMs?: number;
  /** Largest and default page `limit`; ≤ `maxEvents`. @default min(256, maxEvents) */
  maxQueryEvents?: number;
  /** Largest and default page `maxBytes`; `maxEventBytes`..`maxBytes`. @default min(1 MiB, maxBytes), at least maxEventBytes */
  maxQueryBytes?: number;
  /** `'reject'` refuses an event the projection had to cut; `'prune'` (trusted emitters only) stores the rest. @default 'reject' */
  contentPolicy?: TraceContentPolicy;
  /** Lifetime of an idle lifecycle receiver, in ms; `retentionMs`..604 800 000. @default 86400000 */
  lifecycleReceiverTtlMs?: number;
  /** Receiver deliveries in flight at once; ≤ 4096. @default 1024 */
  maxLifecyclePending?: number;
  /** Work items of each kind one prune pass removes at most; ≤ 10 000. @default 1024 */
  maxPruneBatch?: number;
}

/** Validated options with every default applied, plus the derived bounds. */
export interface ResolvedTraceStoreOptions extends Readonly<Required<TraceStoreOptions>> {
  /** = `maxPrincipals`. */
  readonly maxLifecycleReceivers: number;
  /** Largest event a receiver accepts, in canonical JSON bytes: 65 536. */
  readonly maxDeliveryBytes: number;
  /** = `maxEvents` × 16 + `maxPrincipals` (tombstones included). */
  readonly maxStreams: number;
  /** Owners one receiver binds at most: 1024. */
  readonly maxOwnersPerReceiver: number;
}

/** The 14 options under their snake_case status keys (spec 06 §8 `limits`). */
export interface TraceStoreLimits {
  readonly max_events: number;
  readonly max_bytes: number;
  readonly max_event_bytes: number;
  readonly max_principals: number;
  readonly max_events_per_principal: number;
  readonly max_bytes_per_principal: number;
  readonly retention_ms: number;
  readonly prune_interval_ms: number;
  readonly max_query_events: number;
  readonly max_query_bytes: number;
  readonly content_policy: TraceContentPolicy;
  readonly lifecycle_receiver_ttl_ms: number;
  readonly max_lifecycle_pending: number;
  readonly max_prune_batch: number;
}

/** Largest event a receiver accepts, in canonical JSON bytes (spec 06 §2, derived). */
export const MAX_DELIVERY_BYTES = 65_536;

/** Owners one receiver binds at most (spec 06 §2, derived). */
export const MAX_OWNERS_PER_RECEIVER = 1024;

type OptionName = keyof TraceStoreOptions;
type Resolved = { -readonly [K in OptionName]-?: TraceStoreOptions[K] & {} };

/** Value rules in table order: the positive safe integers with their absolute bounds, and the policy enum. */
const VALUE_RULES: { readonly [K in OptionName]: (value: unknown) => boolean } = {
  maxEvents: integerIn(1, 1_000_000),
  maxBytes: integerIn(1, GiB),
  maxEventBytes: integerIn(1, 16 * MiB),
  maxPrincipals: integerIn(1, 100_000),
  maxEventsPerPrincipal: integerIn(1),
  maxBytesPerPrincipal: integerIn(1),
  retentionMs: integerIn(1, 86_400_000),
  pruneIntervalMs: integerIn(1),
  maxQueryEvents: integerIn(1),
  maxQueryBytes: integerIn(1),
  contentPolicy: oneOf('reject', 'prune'),
  lifecycleReceiverTtlMs: integerIn(1, 604_800_000),
  maxLifecyclePending: integerIn(1, 4096),
  maxPruneBatch: integerIn(1, 10_000),
};

const OPTION_NAMES = Object.keys(VALUE_RULES) as OptionName[];

/** Defaults in table order; each may read the options resolved before it. */
const DEFAULTS: { readonly [K in OptionName]: (o: Resolved) => Resolved[K] } = {
  maxEvents: () => 4096,
  maxBytes: () => 16 * MiB,
  maxEventBytes: () => 256 * KiB,
  maxPrincipals: () => 1024,
  maxEventsPerPrincipal: (o) => Math.min(1024, o.maxEvents),
  maxBytesPerPrincipal: (o) => Math.max(Math.min(4 * MiB, o.maxBytes), o.maxEventBytes),
  retentionMs: () => 300_000,
  pruneIntervalMs: (o) => Math.min(1000, o.retentionMs),
  maxQueryEvents: (o) => Math.min(256, o.maxEvents),
  maxQueryBytes: (o) => Math.max(Math.min(MiB, o.maxBytes), o.maxEventBytes),
  contentPolicy: () => 'reject',
  lifecycleReceiverTtlMs: () => 86_400_000,
  maxLifecyclePending: () => 1024,
  maxPruneBatch: () => 1024,
};

/** The bounds that name other options, checked once every value is known, in table order. */
const CROSS_BOUNDS: { readonly [K in OptionName]?: (o: Resolved) => boolean } = {
  maxEventBytes: (o) => o.maxEventBytes <= o.maxBytes,
  maxEventsPerPrincipal: (o) => o.maxEventsPerPrincipal <= o.maxEvents,
  maxBytesPerPrincipal: (o) => o.maxBytesPerPrincipal >= o.maxEventBytes && o.maxBytesPerPrincipal <= o.maxBytes,
  pruneIntervalMs: (o) => o.pruneIntervalMs <= o.retentionMs,
  maxQueryEvents: (o) => o.maxQueryEvents <= o.maxEvents,
  maxQueryBytes: (o) => o.maxQueryBytes >= o.maxEventBytes && o.maxQueryBytes <= o.maxBytes,
  lifecycleReceiverTtlMs: (o) => o.lifecycleReceiverTtlMs >= o.retentionMs,
};

const invalid = (details: ErrorDetails): TraceStoreError => new TraceStoreError('invalid_trace_store_options', details);

/**
 * Validates `options` in the order of spec 06 §2 and applies the defaults. Reads own data
 * properties only (a getter is never called: an accessor makes its option the offender).
 * Throws `invalid_trace_store_options` with `{}` (not a plain object), the unknown keys (`{field}` or
 * `{fields}`, sorted), or `{field}` (the first offender in table order, values before cross bounds).
 */
export function resolveTraceStoreOptions(options: unknown): ResolvedTraceStoreOptions {
  const read = readOptions(options, VALUE_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) {
    if (read.unknown.length > 0) throw invalid(optionFailureDetails(read.unknown));
    const offender = OPTION_NAMES.find((name) => read.fields.includes(name));
    throw invalid(offender === undefined ? {} : { field: offender });
  }
  const given = read.values;
  const resolved = {} as Resolved;
  for (const name of OPTION_NAMES) {
    const value = given[name];
    (resolved as Record<OptionName, unknown>)[name] = value === undefined ? DEFAULTS[name](resolved) : value;
  }
  for (const name of OPTION_NAMES) if (CROSS_BOUNDS[name]?.(resolved) === false) throw invalid({ field: name });
  return Object.freeze({
    ...resolved,
    maxLifecycleReceivers: resolved.maxPrincipals,
    maxDeliveryBytes: MAX_DELIVERY_BYTES,
    maxStreams: resolved.maxEvents * 16 + resolved.maxPrincipals,
    maxOwnersPerReceiver: MAX_OWNERS_PER_RECEIVER,
  });
}

/** The `limits` record of `status()`. */
export function traceStoreLimits(o: ResolvedTraceStoreOptions): TraceStoreLimits {
  return Object.freeze({
    max_events: o.maxEvents,
    max_bytes: o.maxBytes,
    max_event_bytes: o.maxEventBytes,
    max_principals: o.maxPrincipals,
    max_events_per_principal: o.maxEventsPerPrincipal,
    max_bytes_per_principal: o.maxBytesPerPrincipal,
    retention_ms: o.retentionMs,
    prune_interval_ms: o.pruneIntervalMs,
    max_query_events: o.maxQueryEvents,
    max_query_bytes: o.maxQueryBytes,
    content_policy: o.contentPolicy,
    lifecycle_receiver_ttl_ms: o.lifecycleReceiverTtlMs,
    max_lifecycle_pending: o.maxLifecyclePending,
    max_prune_batch: o.maxPruneBatch,
  });
}

/** Collaborators of a `TraceStore`. */
export interface TraceStoreDeps {
  /** Time source: monotonic for retention and TTLs, wall clock for `timestamp_ms`, timers for the prune pass. @default the system clock (timers `unref`'d) */
  clock?: Clock;
}

/** An object (not a Proxy) with the four `Clock` methods. */
function isClock(value: unknown): value is Clock {
  if (typeof value !== 'object' || value === null || types.isProxy(value)) return false;
  try {
    const clock = value as Clock;
    return [clock.monotonicNow, clock.wallNow, clock.setTimer, clock.clearTimer].every((fn) => typeof fn === 'function');
  } catch {
    return false;
  }
}

/** Validates `deps` (unknown keys refused); `invalid_trace_store_request` with `{}` otherwise. */
export function resolveTraceStoreDeps(deps: unknown): { readonly clock: Clock } {
  const read = readOptions(deps, { clock: isClock }, { name: 'deps', unknownKeys: 'refuse' });
  if (!read.ok) throw new TraceStoreError('invalid_trace_store_request', {});
  return { clock: (read.values.clock as Clock | undefined) ?? systemClock };
}

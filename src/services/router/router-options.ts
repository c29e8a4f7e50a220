import { isAbortSignal } from '../../shared/async/abort-signal';
import { MAX_TIMER_DELAY_MS, systemClock, type Clock } from '../../shared/time/clock';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn, isBoolean, isFunction, isNonEmptyString, oneOf } from '../../shared/options/option-rules';
import { invalidComponentConfig, type ComponentKind } from '../config-reader';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { AdapterCallOptions, ComponentCapabilities } from '../services.types';

/** `shared`: one worker for every scope; `exact_scope`: one worker per scope key. */
export type RouterRouting = 'shared' | 'exact_scope';

/** How a router frees capacity (spec 07 §1.5, §4). */
export type IdleReclamation = ComponentCapabilities['idle_reclamation'];

/** What a router is told about its component (spec 07 §3, §4); the bundle builds it from compiled configuration. */
export interface ScopeRouterSettings<S> {
  readonly kind: ComponentKind;
  readonly routing: RouterRouting;
  /** The adapter keeps its data outside the process; idle reclamation runs only for `exact_scope` over a durable adapter. */
  readonly durable: boolean;
  /** The adapter's id, shown as `adapter` in the status record. */
  readonly adapterId: string;
  /** Installed workers plus reserved slots; integer > 0 (effective 1 under `shared`). */
  readonly maxActiveScopes: number;
  /** Cold routes in flight at once; integer > 0. */
  readonly maxRouterQueue: number;
  /** How long a worker must be unused before reclamation may take it; integer 1..86,400,000. */
  readonly idleScopeTimeoutMs: number;
  /** The bound of a call without `timeoutMs`; integer 1..600,000. */
  readonly callTimeoutMs: number;
  /** The validated, frozen scope, or a thrown `invalid_scope` / `invalid_memory_scope` {@link RuntimeServiceError}. */
  checkScope(scope: unknown): S;
  /** The scope key (`scopeKey(kind, scope)`); not consulted under `shared`, where every scope maps to the one worker. */
  keyOf(scope: S): string;
  /** A worker's start, with the creating caller's remaining time and a signal that aborts once nobody waits for it. */
  openScope(scopeKey: string, call: AdapterCallOptions): Promise<void>;
  /** The code of an adapter exception (its text is never kept). */
  readonly adapterFailure: 'artifact_shard_adapter_failed' | 'memory_shard_adapter_failed';
  /** Time source of deadlines, idleness and timers. @default the system clock */
  readonly clock?: Clock;
  /** Told (once, in a later microtask) when an unexpected error escapes the router's own bookkeeping: the bundle fail-stops. */
  onChildDown?(reason: string): void;
}

/** Settings after validation, with the effective capacity and reclamation mode. */
export interface ResolvedRouterSettings<S> extends ScopeRouterSettings<S> {
  readonly clock: Clock;
  readonly capacity: number;
  readonly idleReclamation: IdleReclamation;
}

/** The routing key of the one worker of a `shared` router. */
export const SHARED_SCOPE_KEY = 'shared';

const isComponentKind = oneOf('artifact', 'memory');
const SETTING_RULES: OptionRules<Exclude<keyof ScopeRouterSettings<unknown>, 'kind'>> = {
  routing: oneOf('shared', 'exact_scope'),
  durable: isBoolean,
  adapterId: isNonEmptyString,
  maxActiveScopes: integerIn(1),
  maxRouterQueue: integerIn(1),
  idleScopeTimeoutMs: integerIn(1, 86_400_000),
  callTimeoutMs: integerIn(1, 600_000),
  checkScope: isFunction,
  keyOf: isFunction,
  openScope: isFunction,
  adapterFailure: oneOf('artifact_shard_adapter_failed', 'memory_shard_adapter_failed'),
  clock: (value) => typeof value === 'object' && value !== null,
  onChildDown: isFunction,
};
const OPTIONAL_SETTINGS: ReadonlySet<string> = new Set(['clock', 'onChildDown']);
const REQUIRED_SETTINGS = (Object.keys(SETTING_RULES) as Array<keyof typeof SETTING_RULES>).filter((name) => !OPTIONAL_SETTINGS.has(name));

/**
 * Checks every setting with the shared reader (other keys ignored); bad ones, then missing ones, →
 * `invalid_runtime_service_component_config` with `details: {kind, reason: 'component_config'}` +
 * `field`/sorted `fields` (without `kind` when the kind itself is the one that failed).
 */
export function resolveRouterSettings<S>(settings: ScopeRouterSettings<S>): ResolvedRouterSettings<S> {
  const framed = readOptions(settings ?? null, { kind: isComponentKind }, { name: 'settings', unknownKeys: 'ignore' });
  const kind = framed.ok ? (framed.values.kind as ComponentKind | undefined) : undefined;
  if (kind === undefined) throw new RuntimeServiceError('invalid_runtime_service_component_config', { reason: 'component_config', ...optionFailureDetails(framed.ok ? ['kind'] : framed.fields) });
  const invalid = (fields: readonly string[]) => invalidComponentConfig(kind, 'component_config', optionFailureDetails(fields));
  const read = readOptions(settings, SETTING_RULES, { name: 'settings', unknownKeys: 'ignore' });
  if (!read.ok) throw invalid(read.fields);
  const missing = REQUIRED_SETTINGS.filter((name) => read.values[name] === undefined);
  if (missing.length > 0) throw invalid(missing);
  const values = { ...(read.values as Omit<ScopeRouterSettings<S>, 'kind'>), kind };
  const shared = values.routing === 'shared';
  return Object.freeze({
    ...values,
    clock: values.clock ?? systemClock,
    capacity: shared ? 1 : values.maxActiveScopes,
    idleReclamation: shared ? 'not_required_shared_adapter' : values.durable ? 'lru_on_capacity' : 'disabled_for_volatile_adapter',
  });
}

/** A call's options after validation. */
export interface CallOptions {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
}

const CALL_OPTION_RULES = { signal: isAbortSignal, timeoutMs: integerIn(0, MAX_TIMER_DELAY_MS) };

/**
 * Reads `{signal?, timeoutMs?}` (own data only, other keys ignored). `timeoutMs` is an integer
 * 0..2^31 − 1 (0: no time at all, so the call times out). The contract has no code for bad call
 * options; they count as a caller the router cannot observe: `scope_route_caller_unavailable` with
 * `details: {reason: 'invalid_call_options', field}`.
 */
export function readCallOptions(options: unknown, defaults: CallOptions): CallOptions {
  const read = readOptions(options, CALL_OPTION_RULES, { name: 'options', unknownKeys: 'ignore' });
  if (!read.ok) throw new RuntimeServiceError('scope_route_caller_unavailable', { reason: 'invalid_call_options', ...optionFailureDetails(read.fields) });
  return {
    signal: (read.values.signal as AbortSignal | undefined) ?? defaults.signal,
    timeoutMs: (read.values.timeoutMs as number | undefined) ?? defaults.timeoutMs,
  };
}

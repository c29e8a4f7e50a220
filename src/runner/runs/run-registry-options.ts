import { isTraceStoreBinding, type TraceStoreBinding } from '../../trace/trace-producer';
import { MAX_TIMER_DELAY_MS, systemClock, type Clock } from '../../shared/time/clock';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { InMemoryRunStore } from './stores/in-memory-run-store';
import type { RegistryRunner } from './run-registry.types';
import type { RunStore } from './stores/run-store';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { RunnerError } from '../runner.errors';

/** Options of `new RunRegistry(...)` (spec 03 §9). Unknown keys and bad values give `invalid_runner_options` (`{field}`). */
export interface RunRegistryOptions {
  /** The runners, addressed by their root agent's name (unique). */
  readonly runners: readonly RegistryRunner[];
  /** Runs retained, active and finished; a start past it removes the oldest finished run. 1..1,000,000. @default 1024 */
  readonly maxRuns?: number;
  /** How long a finished run stays readable, 0..2^31−1 ms (the timer is `unref`'d). @default 300000 */
  readonly finishedRunTtlMs?: number;
  /** Stream items kept per run for replay, 1..1,000,000. @default 1024 */
  readonly maxBufferedItems?: number;
  /** At shutdown, active runs are cancelled (`'shutdown'`) and awaited up to this, 0..600000 ms. @default 10000 */
  readonly shutdownGraceMs?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Where runs and their items live. @default a new `InMemoryRunStore` */
  readonly store?: RunStore;
  /** Run lifecycle events go to this store under `principal` (spec 03 §9, 06 §9). @default none */
  readonly traceStore?: TraceStoreBinding;
  /**
   * The telemetry sink of the invocations this registry runs, passed to the runner as the request's
   * `events`: a Runner built without its own `events` reports `agent_runtime.runner.invocation` here.
   * `RunsModule` sets it to the app's `EventEmitter2` when `EventEmitterModule` is imported.
   * @default none (the Nest module: the app's `EventEmitter2` when present)
   */
  readonly events?: TelemetrySink;
}

/** Options with the defaults applied; runners keyed by agent name. */
export interface ResolvedRunRegistryOptions {
  readonly runners: ReadonlyMap<string, RegistryRunner>;
  readonly maxRuns: number;
  readonly finishedRunTtlMs: number;
  readonly maxBufferedItems: number;
  readonly shutdownGraceMs: number;
  readonly clock: Clock;
  readonly store: RunStore;
  readonly traceStore: TraceStoreBinding | null;
  readonly events: TelemetrySink | null;
}

const hasMethods = (methods: readonly string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null && methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

const RUNNER_METHODS = ['runAsync', 'resumeAsync', 'checkResumeInput', 'discardContinuations'] as const;
const STORE_METHODS = ['create', 'get', 'update', 'append', 'itemsAfter', 'watch', 'delete', 'countActive'] as const;

/** The rules of every option but `runners` (the Nest module reads them from its `registry` option). */
export const REGISTRY_SETTING_RULES = {
  maxRuns: integerIn(1, 1_000_000),
  finishedRunTtlMs: integerIn(0, MAX_TIMER_DELAY_MS),
  maxBufferedItems: integerIn(1, 1_000_000),
  shutdownGraceMs: integerIn(0, 600_000),
  clock: hasMethods(['monotonicNow', 'wallNow', 'setTimer', 'clearTimer']),
  store: hasMethods(STORE_METHODS),
  traceStore: isTraceStoreBinding,
  events: hasMethods(['emit']),
} satisfies OptionRules<Exclude<keyof RunRegistryOptions, 'runners'>>;

const RULES: OptionRules<keyof RunRegistryOptions> = { runners: Array.isArray, ...REGISTRY_SETTING_RULES };

/** Validates registry options (unknown keys refused) and applies the defaults. */
export function resolveRunRegistryOptions(options: unknown): ResolvedRunRegistryOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  const o = read.values as Partial<RunRegistryOptions>;
  if (o.runners === undefined) throw new RunnerError('invalid_runner_options', { field: 'runners' });
  return Object.freeze({
    runners: runnersByAgent(o.runners),
    maxRuns: o.maxRuns ?? 1024,
    finishedRunTtlMs: o.finishedRunTtlMs ?? 300_000,
    maxBufferedItems: o.maxBufferedItems ?? 1024,
    shutdownGraceMs: o.shutdownGraceMs ?? 10_000,
    clock: o.clock ?? systemClock,
    store: o.store ?? new InMemoryRunStore(),
    traceStore: (o.traceStore as TraceStoreBinding | undefined) ?? null,
    events: o.events ?? null,
  });
}

/**
 * The runners keyed by root agent name; anything that is not a runner, or a second runner for the
 * same agent, gives `invalid_runner_options` (`{field: 'runners'}`).
 */
export function runnersByAgent(runners: unknown): ReadonlyMap<string, RegistryRunner> {
  if (!Array.isArray(runners)) throw new RunnerError('invalid_runner_options', { field: 'runners' });
  const byName = new Map<string, RegistryRunner>();
  for (const runner of runners as unknown[]) {
    const name = agentNameOf(runner);
    if (name === undefined || !hasMethods(RUNNER_METHODS)(runner) || byName.has(name)) throw new RunnerError('invalid_runner_options', { field: 'runners' });
    byName.set(name, runner as RegistryRunner);
  }
  return byName;
}

function agentNameOf(runner: unknown): string | undefined {
  if (typeof runner !== 'object' || runner === null) return undefined;
  const agent = (runner as { agent?: unknown }).agent;
  const name = typeof agent === 'object' && agent !== null ? (agent as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}

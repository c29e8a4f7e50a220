import { ScopeRouter } from '../scope-router';
import type { ScopeRouterSettings } from '../router-options';
import { checkMemoryScope, scopeKey } from '../../service-scope';
import type { AdapterCallOptions, MemoryScope } from '../../services.types';
import { ManualClock } from '../../../shared/time/manual-clock';

/** A promise the test settles. */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One `openScope` call seen by the fixture; `stalled` ones wait for `gate`. */
export interface OpenCall {
  readonly key: string;
  readonly call: AdapterCallOptions;
  readonly gate: Deferred;
}

/** The memory scope of user `userId` of app `app`. */
export const scope = (userId: string): MemoryScope => ({ appName: 'app', userId });

/** The scope key the fixture's router uses for `userId`. */
export const keyOf = (userId: string): string => scopeKey('memory', scope(userId));

/**
 * A memory router on a manual clock (durable, `exact_scope`, 4 scopes, queue 4, idle 10 ms, calls
 * 1000 ms unless overridden). `openScope` resolves at once unless `stallOpens` is set, in which
 * case each call waits for its own gate in `opens`.
 */
export function routerFixture(overrides: Partial<ScopeRouterSettings<MemoryScope>> = {}) {
  const clock = (overrides.clock as ManualClock | undefined) ?? new ManualClock();
  const opens: OpenCall[] = [];
  const childDown: string[] = [];
  const control = { stallOpens: false };
  const settings: ScopeRouterSettings<MemoryScope> = {
    kind: 'memory',
    routing: 'exact_scope',
    durable: true,
    adapterId: 'test_memory',
    maxActiveScopes: 4,
    maxRouterQueue: 4,
    idleScopeTimeoutMs: 10,
    callTimeoutMs: 1000,
    checkScope: checkMemoryScope,
    keyOf: (memoryScope) => scopeKey('memory', memoryScope),
    openScope: (key, call) => {
      const gate = deferred();
      opens.push({ key, call, gate });
      if (!control.stallOpens) gate.resolve();
      return gate.promise;
    },
    adapterFailure: 'memory_shard_adapter_failed',
    clock,
    onChildDown: (reason) => childDown.push(reason),
    ...overrides,
  };
  const router = new ScopeRouter(settings);
  return {
    clock,
    router,
    opens,
    childDown,
    control,
    /** `openScope` calls for `userId`'s key. */
    opensOf: (userId: string) => opens.filter((open) => open.key === keyOf(userId)).length,
  };
}

/** Lets every pending promise callback run. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** How a promise settled, once callbacks have run: `'pending'`, `'ok'` or the error's code. */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  let state = 'pending';
  promise.then(
    () => (state = 'ok'),
    (error: { code?: string }) => (state = error?.code ?? 'error'),
  );
  await flush();
  return state;
}

/** An operation that records its calls and waits for the test to settle each one. */
export function stalledOperation<T = string>() {
  const calls: Array<{ scope: MemoryScope; call: AdapterCallOptions; result: Deferred<T> }> = [];
  const operation = (memoryScope: MemoryScope, call: AdapterCallOptions): Promise<T> => {
    const result = deferred<T>();
    calls.push({ scope: memoryScope, call, result });
    return result.promise;
  };
  return { operation, calls };
}

/** An operation answering `value` at once. */
export const answer =
  <T>(value: T) =>
  (): Promise<T> =>
    Promise.resolve(value);

/** A {@link routerFixture} whose router has started. */
export async function startedRouter(overrides: Parameters<typeof routerFixture>[0] = {}) {
  const fixture = routerFixture(overrides);
  await fixture.router.start();
  return fixture;
}

/** A clock whose timers never fire: deadlines pass unnoticed until a stage rechecks them. */
export class TimerlessClock extends ManualClock {
  override setTimer(): unknown {
    return {};
  }
}

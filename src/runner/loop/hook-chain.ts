import { RunnerError } from '../runner.errors';

/** Hook names as they appear in `plugin_failed` and `invalid_plugin_amendment` details. */
export type HookName =
  | 'on_user_message'
  | 'before_run'
  | 'before_model'
  | 'after_model'
  | 'before_tool'
  | 'after_tool'
  | 'on_tool_error'
  | 'on_event'
  | 'after_run'
  | 'on_run_error';

/** One callback of a chain and who owns it (a plugin's name, or `agent_callback` for an agent's own). */
export interface HookLink<I, O> {
  readonly owner: string;
  readonly call: (input: I) => O | undefined | Promise<O | undefined>;
}

/** Owner name of an agent-local callback in failure details. */
export const AGENT_CALLBACK = 'agent_callback';

/** What a chain produced: the first non-`undefined` return and whose it was. */
export interface ChainResult<O> {
  readonly value: O;
  readonly owner: string;
}

/**
 * What a chain needs of the invocation it runs in: `userCode` awaits a callback only until the
 * invocation ends, `throwIfEnded` reports that end instead of the callback's failure. Without one
 * (an adapter's own chain) each callback is simply awaited.
 */
export interface CallbackGuard {
  userCode<T>(site: HookName, work: () => T | PromiseLike<T>): Promise<T>;
  throwIfEnded(): void;
}

const UNGUARDED: CallbackGuard = { userCode: async (_site, work) => work(), throwIfEnded: () => undefined };

/**
 * Runs the chain in order; the first non-`undefined` return short-circuits the rest (spec 03 §2).
 * A throw fails the run with `plugin_failed {hook, plugin}`, the exception's text never copied; the
 * invocation ending while a callback runs propagates as that end, without waiting for the callback.
 */
export async function runChain<I, O>(hook: HookName, links: readonly HookLink<I, O>[], input: I, guard: CallbackGuard = UNGUARDED): Promise<ChainResult<O> | undefined> {
  for (const link of links) {
    let value: O | undefined;
    try {
      value = await guard.userCode(hook, () => link.call(input));
    } catch {
      guard.throwIfEnded();
      throw new RunnerError('plugin_failed', { hook, plugin: link.owner });
    }
    if (value !== undefined) return { value, owner: link.owner };
  }
  return undefined;
}

/** Calls an observing hook (after_run, on_run_error): its throw is reported to `onThrow` and never propagates; the invocation's end does. */
export async function runObservers<I>(
  hook: HookName,
  links: readonly HookLink<I, unknown>[],
  input: I,
  onThrow: (owner: string) => void,
  guard: CallbackGuard = UNGUARDED,
): Promise<void> {
  for (const link of links) {
    try {
      await guard.userCode(hook, () => link.call(input));
    } catch {
      guard.throwIfEnded();
      onThrow(link.owner);
    }
  }
}

/** The links of one hook: each plugin that has it, in registration order, then the agent-local callback. */
export function linksOf<I, O>(
  plugins: readonly object[],
  method: string,
  local?: { readonly owner: string; readonly fn: ((input: I) => O | undefined | Promise<O | undefined>) | undefined; readonly self: object },
): HookLink<I, O>[] {
  const links: HookLink<I, O>[] = [];
  for (const plugin of plugins) {
    const fn = (plugin as Record<string, unknown>)[method];
    if (typeof fn === 'function') links.push({ owner: (plugin as { name: string }).name, call: (input) => fn.call(plugin, input) });
  }
  if (local?.fn) {
    const { fn, self } = local;
    links.push({ owner: local.owner, call: (input) => fn.call(self, input) });
  }
  return links;
}

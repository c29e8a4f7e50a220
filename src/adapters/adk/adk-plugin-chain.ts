import { linksOf, runChain, type HookName } from '../../runner/loop/hook-chain';
import type { RunnerError } from '../../runner/runner.errors';
import type { BasePlugin } from './adk.types';
import { failed, type AdkInvocation } from './adk-invocation';

/** The callback methods of an ADK 2.0 plugin, each with its name in `plugin_failed {hook}`. */
export const ADK_PLUGIN_HOOKS = Object.freeze({
  onUserMessageCallback: 'on_user_message',
  beforeRunCallback: 'before_run',
  onEventCallback: 'on_event',
  afterRunCallback: 'after_run',
  beforeAgentCallback: 'before_agent',
  afterAgentCallback: 'after_agent',
  beforeNodeCallback: 'before_node',
  afterNodeCallback: 'after_node',
  beforeModelCallback: 'before_model',
  afterModelCallback: 'after_model',
  onModelErrorCallback: 'on_model_error',
  beforeToolSelection: 'before_tool_selection',
  beforeContextCompaction: 'before_context_compaction',
  afterContextCompaction: 'after_context_compaction',
  beforeToolCallback: 'before_tool',
  afterToolCallback: 'after_tool',
  onToolErrorCallback: 'on_tool_error',
} as const);

/** One callback method of an ADK plugin. */
export type AdkPluginCallback = keyof typeof ADK_PLUGIN_HOOKS;

/**
 * The safety plugin's name in ADK; no application plugin may take it.
 *
 * @example
 * runner.pluginManager.getPlugin(ADK_SAFETY_PLUGIN_NAME); // the AdkSafetyPlugin of a plain ADK Runner
 */
export const ADK_SAFETY_PLUGIN_NAME = 'nest_agent_runtime_safety';

/**
 * Validates the application's plugins: objects with a unique, non-empty `name` (not the safety
 * plugin's), whose callbacks, when present, are functions. `null` when they are not acceptable.
 */
export function readPlugins(value: unknown): readonly BasePlugin[] | null {
  if (!Array.isArray(value)) return null;
  const names = new Set<string>([ADK_SAFETY_PLUGIN_NAME]);
  for (const plugin of value as unknown[]) {
    if (typeof plugin !== 'object' || plugin === null) return null;
    const { name } = plugin as { name?: unknown };
    if (typeof name !== 'string' || name.length === 0 || names.has(name)) return null;
    for (const callback of Object.keys(ADK_PLUGIN_HOOKS)) {
      const fn = (plugin as Record<string, unknown>)[callback];
      if (fn !== undefined && typeof fn !== 'function') return null;
    }
    names.add(name);
  }
  return Object.freeze([...(value as BasePlugin[])]);
}

/**
 * The application's plugins run inside the safety plugin with ADK's own chain semantics (in order;
 * the first non-`undefined` return wins), but a throw becomes `plugin_failed {hook, plugin}` left in
 * the run's side table, the exception's text never copied (ADK would have copied it into an event).
 */
export class AdkPluginChain {
  constructor(private readonly plugins: readonly BasePlugin[]) {}

  async run(callback: AdkPluginCallback, params: object, invocation: AdkInvocation | undefined): Promise<unknown> {
    try {
      // ADK has hooks the Runner has not; their names follow the same snake_case vocabulary
      const produced = await runChain(ADK_PLUGIN_HOOKS[callback] as HookName, linksOf<object, unknown>(this.plugins, callback), params);
      return produced?.value;
    } catch (error) {
      throw failed(invocation, error as RunnerError);
    }
  }
}

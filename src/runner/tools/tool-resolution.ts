import { frozenJsonCopy } from '../../json/json-copy';
import type { Toolset } from '../agent.types';
import type { CompiledAgent, CompiledSubAgent, CompiledTool } from '../loop/agent-tree';
import { openDeclaration } from '../loop/agent-tree';
import type { InvocationScope } from '../invocation/invocation-scope';
import type { ToolDeclaration } from '../models/model.types';

/** Where a call's name led, by preflight only: nothing is materialised (spec 03 §6.4). */
export type Resolution =
  | { readonly kind: 'static'; readonly compiled: CompiledTool }
  | { readonly kind: 'toolset'; readonly toolset: Toolset }
  | { readonly kind: 'sub_agent'; readonly sub: CompiledSubAgent }
  | { readonly kind: 'unknown' };

const UNKNOWN: Resolution = Object.freeze({ kind: 'unknown' });

/** Static tools, then toolsets in declaration order (the first listing the name), then sub-agents. */
export async function resolveTool(scope: InvocationScope, agent: CompiledAgent, name: string): Promise<Resolution> {
  const compiled = agent.tools.get(name);
  if (compiled !== undefined) return { kind: 'static', compiled };
  for (const toolset of agent.toolsets) {
    if ((await listedNames(scope, agent, toolset)).includes(name)) return { kind: 'toolset', toolset };
  }
  const sub = agent.subAgents.get(name);
  return sub !== undefined ? { kind: 'sub_agent', sub } : UNKNOWN;
}

/** What the model is offered: static tools, toolset tools, sub-agents, in that order. */
export async function declarationsOf(scope: InvocationScope, agent: CompiledAgent): Promise<readonly ToolDeclaration[]> {
  const declarations: ToolDeclaration[] = [...agent.tools.values()].map((tool) => tool.declaration);
  for (const toolset of agent.toolsets) {
    const ctx = scope.context(agent.name);
    let offered: readonly ToolDeclaration[];
    try {
      offered = toolset.declarations
        ? frozenJsonCopy([...(await scope.userCode('toolset.declarations', () => (toolset.declarations as NonNullable<Toolset['declarations']>).call(toolset, ctx)))])
        : (await listedNames(scope, agent, toolset)).map(openDeclaration);
    } catch {
      scope.throwIfEnded();
      // a toolset that cannot describe itself offers nothing this turn; its calls still resolve by name
      offered = [];
    }
    declarations.push(...offered.filter((declaration) => typeof declaration?.name === 'string'));
  }
  for (const sub of agent.subAgents.values()) declarations.push(sub.tool.declaration);
  return Object.freeze(declarations);
}

async function listedNames(scope: InvocationScope, agent: CompiledAgent, toolset: Toolset): Promise<readonly string[]> {
  try {
    const names = await scope.userCode('toolset.list_tool_names', () => toolset.listToolNames(scope.context(agent.name)));
    return Array.isArray(names) ? names : [];
  } catch {
    scope.throwIfEnded();
    // a failing preflight lists nothing: the name falls through to later toolsets, sub-agents or unknown
    return [];
  }
}

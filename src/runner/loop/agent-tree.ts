import { frozenJsonCopy } from '../../json/json-copy';
import { isValidId } from '../../shared/ids/id-rule';
import type { Agent, Tool, Toolset } from '../agent.types';
import type { JsonObject } from '../content.types';
import type { ToolDeclaration } from '../models/model.types';
import { RunnerError } from '../runner.errors';
import { compileArgumentSchema, type ArgumentValidator } from '../tools/tool-arguments';

/** Names of tools and of sub-agents called as tools. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A static tool with its compiled argument schema. */
export interface CompiledTool {
  readonly tool: Tool;
  readonly validate: ArgumentValidator | null;
  readonly declaration: ToolDeclaration;
}

/** An agent checked once at construction, with its tools indexed for resolution (spec 03 §6.4). */
export interface CompiledAgent {
  readonly agent: Agent;
  readonly name: string;
  readonly tools: ReadonlyMap<string, CompiledTool>;
  readonly toolsets: readonly Toolset[];
  /** Sub-agents by name, each with the tool form it is called through (spec 03 §6.12). */
  readonly subAgents: ReadonlyMap<string, CompiledSubAgent>;
}

/** A sub-agent and the tool it is called as (args `{input: string}`). */
export interface CompiledSubAgent {
  readonly agent: CompiledAgent;
  readonly tool: CompiledTool;
}

const OPEN_OBJECT: JsonObject = Object.freeze({ type: 'object' });
const SUB_AGENT_PARAMETERS: JsonObject = Object.freeze({
  type: 'object',
  properties: { input: { type: 'string' } },
  required: ['input'],
  additionalProperties: false,
});

const invalid = (field: string) => new RunnerError('invalid_runner_options', { field });

/** Checks the agent tree (names, tools, schemas, callbacks) and compiles it; throws `invalid_runner_options`. */
export function compileAgentTree(root: unknown): CompiledAgent {
  const seen = new Set<string>();
  return compileAgent(root, 'agent', seen, false);
}

function compileAgent(value: unknown, field: string, seen: Set<string>, isSubAgent: boolean): CompiledAgent {
  if (typeof value !== 'object' || value === null) throw invalid(field);
  const agent = value as Agent;
  if (!isValidId(agent.name) || (isSubAgent && !TOOL_NAME.test(agent.name))) throw invalid(`${field}.name`);
  if (seen.has(agent.name)) throw invalid(`${field}.name`);
  seen.add(agent.name);
  if (typeof agent.model !== 'object' || agent.model === null || typeof agent.model.generate !== 'function') throw invalid(`${field}.model`);
  if (agent.description !== undefined && typeof agent.description !== 'string') throw invalid(`${field}.description`);
  if (agent.instruction !== undefined && typeof agent.instruction !== 'string' && typeof agent.instruction !== 'function') throw invalid(`${field}.instruction`);
  if (agent.parallelToolCalls !== undefined && typeof agent.parallelToolCalls !== 'boolean') throw invalid(`${field}.parallelToolCalls`);
  for (const hook of ['beforeModelCallback', 'afterModelCallback', 'beforeToolCallback', 'afterToolCallback'] as const) {
    if (agent[hook] !== undefined && typeof agent[hook] !== 'function') throw invalid(`${field}.${hook}`);
  }
  const tools = new Map<string, CompiledTool>();
  const toolsets: Toolset[] = [];
  const toolNames = new Set<string>();
  const entries = agent.tools ?? [];
  if (!Array.isArray(entries)) throw invalid(`${field}.tools`);
  for (const entry of entries) {
    if (isToolset(entry)) {
      if (typeof entry.name !== 'string' || entry.name.length === 0) throw invalid(`${field}.tools`);
      toolsets.push(entry);
    } else {
      const compiled = compileTool(entry, `${field}.tools`);
      if (toolNames.has(compiled.tool.name)) throw invalid(`${field}.tools`);
      toolNames.add(compiled.tool.name);
      tools.set(compiled.tool.name, compiled);
    }
  }
  const subAgents = new Map<string, CompiledSubAgent>();
  const subs = agent.subAgents ?? [];
  if (!Array.isArray(subs)) throw invalid(`${field}.subAgents`);
  for (const sub of subs) {
    const compiled = compileAgent(sub, `${field}.subAgents`, seen, true);
    if (toolNames.has(compiled.name)) throw invalid(`${field}.subAgents`);
    toolNames.add(compiled.name);
    subAgents.set(compiled.name, Object.freeze({ agent: compiled, tool: subAgentTool(compiled) }));
  }
  return Object.freeze({ agent, name: agent.name, tools, toolsets: Object.freeze(toolsets), subAgents });
}

/** Checks one tool and compiles its schema; a toolset's materialised tools go through it too. */
export function compileTool(value: unknown, field: string): CompiledTool {
  if (typeof value !== 'object' || value === null) throw invalid(field);
  const tool = value as Tool;
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name) || typeof tool.execute !== 'function') throw invalid(field);
  if (tool.description !== undefined && typeof tool.description !== 'string') throw invalid(field);
  if (tool.confirmationHint !== undefined && typeof tool.confirmationHint !== 'string') throw invalid(field);
  const confirmation = tool.requireConfirmation;
  if (confirmation !== undefined && typeof confirmation !== 'boolean' && typeof confirmation !== 'function') throw invalid(field);
  let validate: ArgumentValidator | null;
  let parameters: JsonObject | undefined;
  try {
    // a private frozen copy: a later change of the tool's object changes neither checks nor declarations
    parameters = tool.parameters === undefined ? undefined : frozenJsonCopy(tool.parameters);
    validate = compileArgumentSchema(parameters);
  } catch {
    throw invalid(`${field}.parameters`);
  }
  return Object.freeze({ tool, validate, declaration: declaration(tool.name, tool.description, parameters ?? OPEN_OBJECT) });
}

function subAgentTool(sub: CompiledAgent): CompiledTool {
  const tool: Tool = Object.freeze({
    name: sub.name,
    ...(sub.agent.description === undefined ? {} : { description: sub.agent.description }),
    parameters: SUB_AGENT_PARAMETERS,
    // never called: the Runner runs the sub-agent's own loop for this tool (spec 03 §6.12)
    execute: () => null,
  });
  return compileTool(tool, 'agent.subAgents');
}

function isToolset(value: unknown): value is Toolset {
  const candidate = value as Toolset | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.listToolNames === 'function' && typeof candidate.materialize === 'function';
}

function declaration(name: string, description: string | undefined, parameters: JsonObject): ToolDeclaration {
  return Object.freeze(description === undefined ? { name, parameters } : { name, description, parameters });
}

/** The declaration of a toolset tool listed by name only. */
export function openDeclaration(name: string): ToolDeclaration {
  return declaration(name, undefined, OPEN_OBJECT);
}

import { checkPolicy } from '../loop/policy-gate';
import { frozenJsonCopy } from '../../json/json-copy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { isPlainObject } from '../../shared/options/plain-object';
import { isToolAmendment, type ConfirmationDecision, type Tool, type ToolContext, type ToolHookArgs } from '../agent.types';
import { compileTool, type CompiledAgent, type CompiledTool } from '../loop/agent-tree';
import type { JsonObject, JsonValue } from '../content.types';
import { denialRecord, recordDenial } from '../loop/event-recorder';
import { AGENT_CALLBACK, linksOf, runChain } from '../loop/hook-chain';
import type { InvocationScope } from '../invocation/invocation-scope';
import type { ToolCall } from '../models/model.types';
import { RunnerError } from '../runner.errors';
import { runSubAgent } from '../loop/sub-agent';
import { invalidArgumentsResponse, NOT_AN_OBJECT } from './tool-arguments';
import { resolveTool, type Resolution } from './tool-resolution';
import type { ToolSpan } from '../tracing/run-tracer';

/** Outcomes of a tool call (trace and telemetry vocabulary, spec 03 §8). */
export type ToolCallOutcome =
  | 'executed'
  | 'denied'
  | 'invalid_arguments'
  | 'not_found'
  | 'unavailable'
  | 'error'
  | 'confirmation_requested'
  | 'rejected'
  | 'short_circuited';

/** A call answered without running anything; a barrier ends a parallel batch (spec 03 §6.10). */
export interface AnsweredCall {
  readonly kind: 'answer';
  readonly call: ToolCall;
  readonly response: JsonValue;
  readonly barrier: boolean;
  readonly outcome: ToolCallOutcome;
  /** The deny decision whose audit event goes before the response. */
  readonly denial?: PolicyDecision;
  /** False when the name resolved to none of the agent's tools: a name the model made up, never recorded as it is. */
  readonly declared: boolean;
}

/** An allowed call awaiting a human's decision. */
export interface PendingCall {
  readonly kind: 'pending';
  readonly call: ToolCall;
  readonly hint?: string;
}

/** An allowed call ready to run. */
export interface RunnableCall {
  readonly kind: 'run';
  readonly call: ToolCall;
  readonly tool: CompiledTool;
  readonly subAgent: CompiledAgent | null;
  readonly args: JsonObject;
  readonly confirmation: ConfirmationDecision | undefined;
  readonly neededConfirmation: boolean;
}

export type PreparedCall = AnsweredCall | PendingCall | RunnableCall;

const answer = (call: ToolCall, kind: string, outcome: ToolCallOutcome, declared = true): AnsweredCall => ({
  kind: 'answer',
  call,
  response: { success: false, error: { kind } },
  barrier: false,
  outcome,
  declared,
});
const invalidArguments = (call: ToolCall, declared: boolean, issues = NOT_AN_OBJECT): AnsweredCall => ({
  kind: 'answer',
  call,
  response: invalidArgumentsResponse(issues),
  barrier: true,
  outcome: 'invalid_arguments',
  declared,
});

/**
 * Steps 4–7 of one call in model order (spec 03 §6.4–6.7): preflight resolution, argument checks,
 * the tool policy check, materialisation of allowed toolset tools, the confirmation requirement.
 * `confirmedBy` (the approver of `decision`) is recorded on the re-check's decision as `approved_by`.
 */
export async function prepareCall(
  scope: InvocationScope,
  agent: CompiledAgent,
  call: ToolCall,
  decision: ConfirmationDecision | undefined,
  isSubAgent: boolean,
  span: ToolSpan,
  confirmedBy?: string,
): Promise<PreparedCall> {
  if (decision !== undefined && !decision.confirmed) {
    // the call resolved to a configured tool when it paused
    span.identify(call.name);
    return answer(call, 'confirmation_rejected', 'rejected');
  }
  const resolution = await resolveTool(scope, agent, call.name);
  // the agent's tools, toolsets and sub-agents are its declared names; any other name is the model's
  // content: it names no span, and the policy records it as 'unknown_tool' with a digest
  const declared = resolution.kind !== 'unknown';
  if (declared) span.identify(call.name);
  if (!isPlainObject(call.args)) return invalidArguments(call, declared);
  const args = call.args as JsonObject;
  const known = staticTool(resolution);
  const issues = known?.validate?.(args) ?? null;
  if (issues !== null) return invalidArguments(call, declared, issues);
  const policy = scope.options.policy;
  if (policy !== null) {
    const checked = checkPolicy(scope, declared ? 'tool' : 'undeclared_tool', call.name, args, undefined, confirmedBy);
    span.policy('tool_call', checked);
    if (checked !== null) return { kind: 'answer', call, response: denialRecord(checked), barrier: true, outcome: 'denied', denial: checked, declared };
  }
  let tool: CompiledTool;
  if (resolution.kind === 'unknown') return answer(call, 'tool_not_found', 'not_found', false);
  if (resolution.kind === 'toolset') {
    const materialized = await materialize(scope, agent, resolution, call.name);
    if (materialized === null) return answer(call, 'tool_unavailable', 'unavailable');
    const late = materialized.validate?.(args) ?? null;
    if (late !== null) return invalidArguments(call, true, late);
    tool = materialized;
  } else {
    tool = known as CompiledTool;
  }
  const ctx = scope.toolContext(agent.name, call.id, decision);
  const neededConfirmation = await needsConfirmation(scope, tool.tool, args, ctx);
  if (neededConfirmation && decision === undefined) {
    if (isSubAgent) return answer(call, 'confirmation_unavailable', 'unavailable');
    return tool.tool.confirmationHint === undefined ? { kind: 'pending', call } : { kind: 'pending', call, hint: tool.tool.confirmationHint };
  }
  const subAgent = resolution.kind === 'sub_agent' ? resolution.sub.agent : null;
  return { kind: 'run', call, tool, subAgent, args, confirmation: decision, neededConfirmation };
}

function staticTool(resolution: Resolution): CompiledTool | null {
  if (resolution.kind === 'static') return resolution.compiled;
  if (resolution.kind === 'sub_agent') return resolution.sub.tool;
  return null;
}

async function materialize(scope: InvocationScope, agent: CompiledAgent, resolution: Extract<Resolution, { kind: 'toolset' }>, name: string): Promise<CompiledTool | null> {
  scope.materialized.add(resolution.toolset);
  try {
    const tool = await scope.userCode('toolset.materialize', () => resolution.toolset.materialize(name, scope.context(agent.name)));
    const compiled = compileTool(tool, 'tool');
    return compiled.tool.name === name ? compiled : null;
  } catch {
    scope.throwIfEnded();
    return null;
  }
}

async function needsConfirmation(scope: InvocationScope, tool: Tool, args: JsonObject, ctx: ToolContext): Promise<boolean> {
  const requirement = tool.requireConfirmation;
  if (requirement === undefined || typeof requirement === 'boolean') return requirement === true;
  try {
    return (await scope.userCode('tool.require_confirmation', () => requirement.call(tool, args, ctx))) !== false;
  } catch {
    scope.throwIfEnded();
    // a predicate that cannot answer asks the human
    return true;
  }
}

/** What running an allowed call produced: the model-visible response and how it came about. */
export interface CallResult {
  readonly response: JsonValue;
  readonly outcome: ToolCallOutcome;
  /** A deny decision (a sub-agent's agent check) whose audit event goes right before the response, in model order. */
  readonly denial?: PolicyDecision;
}

/**
 * Step 6 and the execution of one allowed call (spec 03 §6.6): the `beforeToolCallback` chain
 * (short-circuit or amendment, re-validated), `execute` or the sub-agent's loop, the error and
 * `afterToolCallback` chains. Never the exception's text in a response.
 */
export async function runCall(scope: InvocationScope, agent: CompiledAgent, prepared: RunnableCall, span: ToolSpan): Promise<CallResult> {
  const { call, tool } = prepared;
  let args = prepared.args;
  const ctx = scope.toolContext(agent.name, call.id, prepared.confirmation);
  const local = (fn: unknown) => ({ owner: AGENT_CALLBACK, fn: fn as never, self: agent.agent });
  const beforeLinks = linksOf<ToolHookArgs, unknown>(scope.options.plugins, 'beforeToolCallback', local(agent.agent.beforeToolCallback));
  const before = await runChain('before_tool', beforeLinks, { ctx, tool: tool.tool, args }, scope);
  let result: JsonValue | undefined;
  let outcome: ToolCallOutcome = 'executed';
  if (before !== undefined && isToolAmendment(before.value)) {
    args = await acceptAmendment(scope, prepared, before.value, ctx, span);
  } else if (before !== undefined) {
    result = jsonResult(before.value, before.owner);
    outcome = 'short_circuited';
  }
  if (result === undefined) {
    if (prepared.subAgent !== null) {
      const sub = await runSubAgent(scope, prepared.subAgent, call, args);
      if (sub.denied) {
        span.policy('agent_invocation', sub.decision);
        return { response: denialRecord(sub.decision), outcome: 'denied', denial: sub.decision };
      }
      result = sub.result;
    } else {
      try {
        result = (await scope.userCode('tool.execute', () => span.run(() => tool.tool.execute(args, ctx)))) ?? null;
      } catch (error) {
        scope.throwIfEnded();
        const errorLinks = linksOf<ToolHookArgs & { error: unknown }, unknown>(scope.options.plugins, 'onToolErrorCallback');
        const replaced = await runChain('on_tool_error', errorLinks, { ctx, tool: tool.tool, args, error }, scope);
        if (replaced === undefined) return { response: { success: false, error: { kind: 'tool_error' } }, outcome: 'error' };
        result = jsonResult(replaced.value, replaced.owner, 'on_tool_error');
      }
    }
  }
  const afterLinks = linksOf<ToolHookArgs & { result: JsonValue }, unknown>(scope.options.plugins, 'afterToolCallback', local(agent.agent.afterToolCallback));
  const after = await runChain('after_tool', afterLinks, { ctx, tool: tool.tool, args, result: result as JsonValue }, scope);
  if (after !== undefined) result = jsonResult(after.value, after.owner, 'after_tool');
  try {
    return { response: { success: true, result: frozenJsonCopy(result as JsonValue) }, outcome };
  } catch {
    // a result JSON cannot hold is the tool's failure, never a crash of the run
    return { response: { success: false, error: { kind: 'tool_error' } }, outcome: 'error' };
  }
}

function jsonResult(value: unknown, owner: string, hook: 'before_tool' | 'after_tool' | 'on_tool_error' = 'before_tool'): JsonValue {
  if (hook === 'before_tool' && !isPlainObject(value)) throw new RunnerError('plugin_failed', { hook, plugin: owner });
  try {
    return frozenJsonCopy(value as JsonValue);
  } catch {
    throw new RunnerError('plugin_failed', { hook, plugin: owner });
  }
}

/** An amendment may change only `args`; the new args pass the schema, the policy and the confirmation rule again. */
async function acceptAmendment(scope: InvocationScope, prepared: RunnableCall, amendment: object, ctx: ToolContext, span: ToolSpan): Promise<JsonObject> {
  const refuse = (reason: string) => new RunnerError('invalid_plugin_amendment', { hook: 'before_tool', reason });
  if (Object.keys(amendment).some((key) => key !== 'args')) throw refuse('tool_reroute_not_allowed');
  let args: JsonObject;
  try {
    args = frozenJsonCopy((amendment as { args: JsonObject }).args);
  } catch {
    throw refuse('invalid_tool_arguments');
  }
  if (!isPlainObject(args) || (prepared.tool.validate?.(args) ?? null) !== null) throw refuse('invalid_tool_arguments');
  const policy = scope.options.policy;
  if (policy !== null) {
    const checked = checkPolicy(scope, 'tool', prepared.call.name, args);
    span.policy('tool_call', checked);
    if (checked !== null) {
      await recordDenial(scope, checked);
      throw refuse('runtime_policy_denied');
    }
  }
  if (!prepared.neededConfirmation && (await needsConfirmation(scope, prepared.tool.tool, args, ctx))) throw refuse('confirmation_required');
  return args;
}

import { frozenJsonCopy } from '../../json/json-copy';
import { randomId } from '../../shared/ids/random-id';
import type { ReadonlyContext } from '../agent.types';
import type { CompiledAgent } from './agent-tree';
import type { JsonValue } from '../content.types';
import { applyEventCallbacks, draftEvent, storeEvent } from './event-recorder';
import { AGENT_CALLBACK, runChain } from './hook-chain';
import type { InvocationScope } from '../invocation/invocation-scope';
import type { HistoryEntry, ModelRequest, ModelResponse, ToolCall } from '../models/model.types';
import { isOverloadedModelError } from '../invocation/invocation-admission';
import { RunnerError } from '../runner.errors';
import { traceRunner } from '../tracing/runner-trace';
import { declarationsOf } from '../tools/tool-resolution';
import { answerToolTurn, type ToolTurn } from '../tools/tool-turn';
import { isTokenId } from '../../shared/ids/id-rule';

/** How an agent's loop ended: a final text, or paused on calls awaiting confirmation. */
export type LoopEnd = { readonly kind: 'final'; readonly text: string } | { readonly kind: 'paused'; readonly pendingCallIds: readonly string[] };

/** Call ids that are safe in a URL and a log: the Runner assigns one to any call without such an id. */

/**
 * An agent's model loop (spec 03 §6.4): model turn, tool turn, until a final answer or a pause.
 * `resumeTurn` first answers a turn the session already holds (a resume).
 */
export async function runAgentLoop(scope: InvocationScope, agent: CompiledAgent, history: HistoryEntry[], isSubAgent: boolean, resumeTurn?: ToolTurn): Promise<LoopEnd> {
  if (resumeTurn !== undefined) {
    const pending = await answerToolTurn(scope, agent, history, resumeTurn, isSubAgent);
    if (pending.length > 0) return { kind: 'paused', pendingCallIds: pending };
  }
  for (;;) {
    scope.throwIfEnded();
    if (scope.modelCalls >= scope.options.maxModelCalls) throw new RunnerError('model_call_limit_exceeded', { limit: scope.options.maxModelCalls });
    scope.modelCalls += 1;
    const response = await modelTurn(scope, agent, history);
    const calls = toolCallsOf(response);
    if (calls.length === 0) return { kind: 'final', text: typeof response.text === 'string' ? response.text : '' };
    const content = typeof response.text === 'string' && response.text.length > 0 ? { text: response.text, tool_calls: calls } : { tool_calls: calls };
    await storeEvent(scope, await applyEventCallbacks(scope, agent.name, draftEvent(scope, agent.name, 'model_turn', content as unknown as JsonValue)));
    history.push({ role: 'model', ...(content.text === undefined ? {} : { text: content.text }), toolCalls: calls });
    const pending = await answerToolTurn(scope, agent, history, { calls }, isSubAgent);
    if (pending.length > 0) return { kind: 'paused', pendingCallIds: pending };
  }
}

/** `beforeModelCallback`, the model call on the invocation signal, `afterModelCallback`. */
async function modelTurn(scope: InvocationScope, agent: CompiledAgent, history: HistoryEntry[]): Promise<ModelResponse> {
  const ctx = scope.context(agent.name);
  // every entry holds frozen, stored JSON already: freezing the shells is enough, no deep copy per turn
  const request: ModelRequest = Object.freeze({
    ...instructionOf(agent, ctx),
    contents: Object.freeze(history.map((entry) => Object.freeze(entry))),
    tools: await declarationsOf(scope, agent),
  });
  const local = (fn: unknown) => [{ owner: AGENT_CALLBACK, call: (input: unknown) => (fn as (input: unknown) => unknown).call(agent.agent, input) }];
  const replaced = agent.agent.beforeModelCallback ? await runChain('before_model', local(agent.agent.beforeModelCallback), { ctx, request }, scope) : undefined;
  let response = replaced === undefined ? await callModel(scope, agent, request) : replaced.value;
  if (agent.agent.afterModelCallback) {
    const after = await runChain('after_model', local(agent.agent.afterModelCallback), { ctx, response }, scope);
    if (after !== undefined) response = after.value;
  }
  if (typeof response !== 'object' || response === null) throw new RunnerError('model_failed', { reason: 'invalid_response' });
  return response as ModelResponse;
}

function instructionOf(agent: CompiledAgent, ctx: ReadonlyContext): { instruction?: string } {
  const { instruction } = agent.agent;
  if (instruction === undefined) return {};
  if (typeof instruction === 'string') return { instruction };
  let text: unknown;
  try {
    text = instruction.call(agent.agent, ctx);
  } catch {
    throw new RunnerError('plugin_failed', { hook: 'before_model', plugin: AGENT_CALLBACK });
  }
  if (typeof text !== 'string') throw new RunnerError('plugin_failed', { hook: 'before_model', plugin: AGENT_CALLBACK });
  return { instruction: text };
}

async function callModel(scope: InvocationScope, agent: CompiledAgent, request: ModelRequest): Promise<unknown> {
  const { clock } = scope.options;
  const started = clock.monotonicNow();
  const span = scope.spans.startChat(agent.name, modelNameOf(agent));
  try {
    const response = await scope.userCode('model.generate', () => span.run(() => agent.agent.model.generate(request, scope.signal)));
    span.succeed(usageOf(response));
    const latencyMs = clock.monotonicNow() - started;
    traceModelCall(scope, agent, latencyMs, response);
    scope.modelReports.modelCallEnded(latencyMs, false);
    return response;
  } catch (error) {
    const latencyMs = clock.monotonicNow() - started;
    traceModelCall(scope, agent, latencyMs, undefined);
    const failure = scope.failureOf(RunnerError.isRunnerError(error) && error.code === 'model_failed' ? error : new RunnerError('model_failed', { reason: 'invalid_response' }));
    // a call ended by the invocation's own end (cancel, timeout) says nothing about the provider
    if (RunnerError.isRunnerError(failure) && failure.code === 'model_failed') scope.modelReports.modelCallEnded(latencyMs, isOverloadedModelError(failure));
    span.fail(failure);
    throw failure;
  }
}

/** `runner.model.call`: the duration, and the token counts the model reported (never the content). */
function traceModelCall(scope: InvocationScope, agent: CompiledAgent, durationMs: number, response: unknown): void {
  const { inputTokens, outputTokens } = usageOf(response);
  const attributes: Record<string, number | string> = { outcome: response === undefined ? 'error' : 'ok' };
  if (inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = inputTokens;
  if (outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = outputTokens;
  const model = modelNameOf(agent);
  traceRunner(scope, 'runner.model.call', { agent: agent.name, ...(model === undefined ? {} : { model }), measurements: { duration_ms: durationMs }, attributes });
}

/** The token counts a response reported, each kept only when it is a non-negative safe integer. */
function usageOf(response: unknown): { inputTokens?: number; outputTokens?: number } {
  const usage = (response as ModelResponse | undefined)?.usage;
  const valid = (count: unknown) => (Number.isSafeInteger(count) && (count as number) >= 0 ? (count as number) : undefined);
  return usage === undefined ? {} : { inputTokens: valid(usage.inputTokens), outputTokens: valid(usage.outputTokens) };
}

function modelNameOf(agent: CompiledAgent): string | undefined {
  return typeof agent.agent.model.name === 'string' ? agent.agent.model.name.slice(0, 128) : undefined;
}

/** The response's calls normalised to `{id, name, args}`; missing, malformed or repeated ids are assigned. */
function toolCallsOf(response: ModelResponse): ToolCall[] {
  const raw = (response as { toolCalls?: unknown }).toolCalls;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new RunnerError('model_failed', { reason: 'invalid_response' });
  const seen = new Set<string>();
  const calls = raw.map((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) throw new RunnerError('model_failed', { reason: 'invalid_response' });
    const { id, name, args } = entry as { id?: unknown; name?: unknown; args?: unknown };
    const callId = isTokenId(id) && !seen.has(id) ? id : randomId('call-').slice(0, 21);
    seen.add(callId);
    return Object.freeze({ id: callId, name: typeof name === 'string' ? name : '', args: jsonOrNull(args) });
  });
  return Object.freeze(calls) as ToolCall[];
}

function jsonOrNull(value: unknown): JsonValue {
  try {
    return frozenJsonCopy(value as JsonValue) ?? null;
  } catch {
    return null;
  }
}

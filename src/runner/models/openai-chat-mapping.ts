import { canonicalJson } from '../../json';
import { isPlainObject } from '../../shared/options/plain-object';
import type { Part } from '../content.types';
import type { HistoryEntry, ModelRequest, ModelResponse, ModelToolCall, ModelUsage, ToolDeclaration } from './model.types';

/** One message of a Chat Completions request. */
export type ChatMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly tool_calls?: readonly ChatToolCall[] }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

/** A tool call as Chat Completions spells it; `arguments` is JSON text. */
export interface ChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** A tool offered to the model. */
export interface ChatTool {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description?: string; readonly parameters: ToolDeclaration['parameters'] };
}

/** The body POSTed to `/chat/completions`. */
export interface ChatCompletionRequestBody {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ChatTool[];
  readonly temperature?: number;
  readonly max_tokens?: number;
}

/** Request settings that come from the model's options rather than from the Runner. */
export interface ChatRequestSettings {
  readonly model: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
}

/**
 * The Chat Completions body for `request` (spec 03 §3): instruction → `system`; user entries →
 * `user` (text parts joined with `"\n"`, data parts as canonical JSON); model turns → `assistant`
 * with `tool_calls` (`arguments` as canonical JSON text); tool entries → `tool` with `tool_call_id`
 * and the response as canonical JSON text; declarations → `tools` (left out when there are none).
 * Throws `JsonError` when the request holds a value JSON cannot represent.
 */
export function toChatRequestBody(request: ModelRequest, settings: ChatRequestSettings): ChatCompletionRequestBody {
  const messages: ChatMessage[] = [];
  if (request.instruction !== undefined && request.instruction !== '') messages.push({ role: 'system', content: request.instruction });
  for (const entry of request.contents) messages.push(toChatMessage(entry));
  return {
    model: settings.model,
    messages,
    ...(request.tools.length > 0 ? { tools: request.tools.map(toChatTool) } : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
  };
}

function toChatMessage(entry: HistoryEntry): ChatMessage {
  switch (entry.role) {
    case 'user':
      return { role: 'user', content: entry.content.parts.map(partText).join('\n') };
    case 'model': {
      const calls = entry.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: entry.text ?? '' };
      return {
        role: 'assistant',
        content: entry.text ?? null,
        tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: canonicalJson(call.args) } })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: entry.callId, content: canonicalJson(entry.response) };
  }
}

function partText(part: Part): string {
  return 'text' in part ? part.text : canonicalJson(part.data);
}

function toChatTool(declaration: ToolDeclaration): ChatTool {
  const { name, description, parameters } = declaration;
  return { type: 'function', function: { name, ...(description !== undefined ? { description } : {}), parameters } };
}

/**
 * The {@link ModelResponse} in a parsed Chat Completions answer, or `null` when its shape is not one:
 * `choices[0].message.content` → `text`; each tool call → `{id, name, args}` with `args` parsed from
 * its JSON text (text that does not parse stays a string, so the Runner answers it
 * `invalid_tool_arguments`); `usage.prompt_tokens`/`completion_tokens` → `usage` (left out unless
 * both are non-negative integers).
 */
export function fromChatResponseBody(body: unknown): ModelResponse | null {
  if (!isPlainObject(body) || !Array.isArray(body.choices) || body.choices.length === 0) return null;
  const choice: unknown = body.choices[0];
  if (!isPlainObject(choice) || !isPlainObject(choice.message)) return null;
  const { content, tool_calls: rawCalls } = choice.message;
  if (content !== undefined && content !== null && typeof content !== 'string') return null;
  let toolCalls: ModelToolCall[] | undefined;
  if (rawCalls !== undefined && rawCalls !== null) {
    if (!Array.isArray(rawCalls)) return null;
    toolCalls = [];
    for (const raw of rawCalls) {
      const call = toModelToolCall(raw);
      if (call === null) return null;
      toolCalls.push(call);
    }
  }
  const usage = toUsage(body.usage);
  return {
    ...(typeof content === 'string' ? { text: content } : {}),
    ...(toolCalls !== undefined && toolCalls.length > 0 ? { toolCalls } : {}),
    ...(usage !== undefined ? { usage } : {}),
  };
}

function toModelToolCall(raw: unknown): ModelToolCall | null {
  if (!isPlainObject(raw) || !isPlainObject(raw.function)) return null;
  if (raw.type !== undefined && raw.type !== 'function') return null;
  const { id } = raw;
  const { name, arguments: args } = raw.function;
  if (typeof name !== 'string' || name === '' || args === undefined) return null;
  if (id !== undefined && id !== null && typeof id !== 'string') return null;
  return { ...(typeof id === 'string' && id !== '' ? { id } : {}), name, args: typeof args === 'string' ? parsedOrText(args) : args };
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toUsage(raw: unknown): ModelUsage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { prompt_tokens: inputTokens, completion_tokens: outputTokens } = raw;
  return isTokenCount(inputTokens) && isTokenCount(outputTokens) ? { inputTokens, outputTokens } : undefined;
}

function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

import type { Content, JsonObject, JsonValue } from '../content.types';

/** A tool as a model sees it: name, description and a JSON Schema of its arguments. */
export interface ToolDeclaration {
  readonly name: string;
  readonly description?: string;
  readonly parameters: JsonObject;
}

/** One tool call a model asked for; `args` is whatever the model produced (checked by the Runner). */
export interface ModelToolCall {
  /** Assigned by the Runner (`call-` + 12 random bytes, base64url) when absent. */
  readonly id?: string;
  readonly name: string;
  readonly args: unknown;
}

/** A normalised tool call as stored in a `model_turn` event. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly args: JsonValue;
}

/** One entry of the history shown to a model, built from the session's events in `seq` order. */
export type HistoryEntry =
  | { readonly role: 'user'; readonly content: Content }
  | { readonly role: 'model'; readonly text?: string; readonly toolCalls?: readonly ToolCall[] }
  | { readonly role: 'tool'; readonly callId: string; readonly name: string; readonly response: JsonValue };

/** What the Runner asks a model. */
export interface ModelRequest {
  readonly instruction?: string;
  readonly contents: readonly HistoryEntry[];
  readonly tools: readonly ToolDeclaration[];
}

/** Token counts a model reports. */
export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** A model's answer: with tool calls it is a tool turn, without it is final. */
export interface ModelResponse {
  readonly text?: string;
  readonly toolCalls?: readonly ModelToolCall[];
  readonly usage?: ModelUsage;
}

/**
 * A language model (spec 03 §3). `generate` must stop when `signal` aborts; failures should be
 * `RunnerError('model_failed', {reason, status?})` (anything else thrown is reported as `model_failed`
 * with reason `invalid_response`).
 */
export interface Model {
  readonly name: string;
  generate(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse>;
}

/** Why a model call failed (`details.reason` of `model_failed`). */
export type ModelFailureReason = 'http_status' | 'timeout' | 'network' | 'invalid_response' | 'script_exhausted';

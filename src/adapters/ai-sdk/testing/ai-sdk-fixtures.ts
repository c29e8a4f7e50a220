import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import type { ModelGenerateResult, ModelStreamPart } from '../ai-sdk.types';
import type { AuditSink } from '../../../policy/audit-log/audit-sink';
import type { PolicyDecision } from '../../../policy/runtime-policy.types';

const usage: ModelGenerateResult['usage'] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A tool turn of a generated response: the model calls each tool with the given input. */
export function toolTurn(...calls: Array<{ id: string; name: string; input: unknown }>): ModelGenerateResult {
  return {
    content: calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.input) })),
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage,
    warnings: [],
  };
}

/** A final generated response. */
export function textTurn(text: string): ModelGenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
}

/** A mock model answering `doGenerate` with `turns` in order. */
export function scriptedModel(...turns: ModelGenerateResult[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({ doGenerate: turns });
}

/** The stream parts of a response: each string a text delta, each call a whole tool call. */
export function streamParts(...items: Array<string | { id: string; name: string; input: unknown }>): ModelStreamPart[] {
  const parts: ModelStreamPart[] = [{ type: 'stream-start', warnings: [] }];
  const texts = items.filter((item): item is string => typeof item === 'string');
  if (texts.length > 0) {
    parts.push({ type: 'text-start', id: 't' });
    for (const delta of texts) parts.push({ type: 'text-delta', id: 't', delta });
    parts.push({ type: 'text-end', id: 't' });
  }
  const calls = items.filter((item): item is { id: string; name: string; input: unknown } => typeof item !== 'string');
  for (const call of calls) parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.input) });
  parts.push({ type: 'finish', finishReason: { unified: calls.length > 0 ? 'tool-calls' : 'stop', raw: undefined }, usage });
  return parts;
}

/** A mock model answering `doStream` with one response per call. */
export function streamingModel(...responses: ModelStreamPart[][]): MockLanguageModelV4 {
  return new MockLanguageModelV4({ doStream: responses.map((parts) => ({ stream: convertArrayToReadableStream(parts) })) });
}

/** An audit sink that keeps what it is given, and can be made to fail. */
export class CapturingSink implements AuditSink {
  readonly decisions: PolicyDecision[] = [];
  failing = false;

  async record(decision: PolicyDecision): Promise<void> {
    if (this.failing) throw new Error('disk full: the sink is down');
    this.decisions.push(decision);
  }
}

/** The tool-result output of call `callId` in a prompt the mock model received. */
export function toolResultIn(prompt: unknown, callId: string): unknown {
  for (const message of prompt as Array<{ role: string; content: unknown }>) {
    if (message.role !== 'tool') continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string; output?: unknown }>) {
      if (part.type === 'tool-result' && part.toolCallId === callId) return part.output;
    }
  }
  return undefined;
}

/** The content-free summary a denied call carries (`ToolDenial`): the decision without its subject, value or digest. */
export function denialOf(decision: PolicyDecision): Record<string, unknown> {
  const { decision_id, policy_id, operation, outcome, reason } = decision;
  return { decision_id, policy_id, operation, outcome, reason };
}

/** The tool output the model is sent for a denied call: the SDK's error text of the thrown `RunnerError`. */
export function deniedOutputOf(decision: PolicyDecision): unknown {
  return { type: 'error-text', value: `RunnerError: runtime_policy_denied ${JSON.stringify(denialOf(decision))}` };
}

/** Every item of an async iterable (`Array.fromAsync` is Node 22+). */
export async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

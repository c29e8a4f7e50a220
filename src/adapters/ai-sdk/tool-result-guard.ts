import { denialError } from '../../runner/loop/event-recorder';
import type { PolicyGuard } from './policy-guard';

/**
 * The tool-result check (`checkContent('tool_result', …)`, spec 03 §6.8) on the value the model is
 * sent: a string as its UTF-8 bytes, anything else as canonical JSON, `undefined` as `null` (as the
 * SDK sends it). Over the budget, or not JSON, the denial is audited and thrown as a `ToolDenialError`
 * (the SDK's tool error); the result itself is never kept.
 */
export async function checkToolResult<T>(guard: PolicyGuard, output: T): Promise<T> {
  const decision = guard.decide('content', 'tool_result', output === undefined ? null : output);
  if (decision.outcome === 'allow') return output;
  await guard.recordDenial(decision);
  throw denialError(decision);
}

/**
 * A streaming tool (an `execute` returning an `AsyncIterable`) checked chunk by chunk: the SDK shows
 * each chunk as a preliminary result and sends the last one to the model. A chunk that is denied is
 * never yielded: the denial is thrown (the call ends as a tool error) and the tool's iterator is closed.
 */
export async function* checkedChunks(guard: PolicyGuard, source: AsyncIterable<unknown>): AsyncGenerator<unknown, void, undefined> {
  for await (const chunk of source) yield await checkToolResult(guard, chunk);
}

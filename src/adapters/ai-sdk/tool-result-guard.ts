import { denialRecord } from '../../runner/loop/event-recorder';
import { isPlainObject } from '../../shared/options/plain-object';
import type { PolicyGuard } from './policy-guard';

/** What a tool result becomes once checked: the result itself, or the denial record in its place. */
export interface CheckedResult {
  readonly output: unknown;
  readonly denied: boolean;
}

/** True for a denial record: `toModelOutput` then passes it to the model as JSON, untouched. */
export function isDenialRecord(value: unknown): boolean {
  if (!isPlainObject(value) || value.success !== false) return false;
  const error = value.error;
  return isPlainObject(error) && error.kind === 'runtime_policy_denied';
}

/**
 * The tool-result check (`checkContent('tool_result', …)`, spec 03 §6.8) on the value the model is
 * sent: a string as its UTF-8 bytes, anything else as canonical JSON, `undefined` as `null` (as the
 * SDK sends it). Over the budget, or not JSON, the result is replaced by the denial record after the
 * denial is audited; the result itself is never kept.
 */
export async function checkToolResult(guard: PolicyGuard, output: unknown): Promise<CheckedResult> {
  const decision = guard.decide('content', 'tool_result', output === undefined ? null : output);
  if (decision.outcome === 'allow') return { output, denied: false };
  await guard.recordDenial(decision);
  return { output: denialRecord(decision), denied: true };
}

/**
 * A streaming tool (an `execute` returning an `AsyncIterable`) checked chunk by chunk: the SDK shows
 * each chunk as a preliminary result and sends the last one to the model. A chunk that is denied is
 * replaced by the denial record, which becomes the last chunk: the tool's iterator is closed.
 */
export async function* checkedChunks(guard: PolicyGuard, source: AsyncIterable<unknown>): AsyncGenerator<unknown, void, undefined> {
  for await (const chunk of source) {
    const checked = await checkToolResult(guard, chunk);
    yield checked.output;
    if (checked.denied) return;
  }
}

import { checkPolicy } from './policy-gate';
import type { Content, JsonValue } from '../content.types';
import { applyEventCallbacks, denialError, draftEvent, recordDenial, storeEvent } from './event-recorder';
import { afterRun } from '../invocation/invocation-lifecycle';
import type { InvocationScope } from '../invocation/invocation-scope';
import type { LoopEnd } from './agent-loop';
import { textContent } from './message';
import type { RunResult } from '../runner.types';

/**
 * The end of the root agent's loop (spec 03 §6.8, §7): a pause records the durable pause; a final
 * output passes `onEventCallback` and the `model_output` check before it is stored, then
 * `afterRunCallback` observes it.
 */
export async function concludeLoop(scope: InvocationScope, end: LoopEnd): Promise<RunResult> {
  if (end.kind === 'paused') {
    await scope.durable?.pause(end.pendingCallIds);
    return Object.freeze({ status: 'paused', invocation_id: scope.invocationId, session_id: scope.ref.sessionId, pending_call_ids: Object.freeze([...end.pendingCallIds]) });
  }
  return storeFinalOutput(scope, textContent('model', end.text));
}

/** Stores `output` as the `final_output` event once the `model_output` check allows it. */
export async function storeFinalOutput(scope: InvocationScope, output: Content): Promise<RunResult> {
  const agentName = scope.options.root.name;
  const event = await applyEventCallbacks(scope, agentName, draftEvent(scope, agentName, 'final_output', output as unknown as JsonValue));
  const policy = scope.options.policy;
  if (policy !== null) {
    const checked = checkPolicy(scope, 'content', 'model_output', event.content);
    scope.spans.policy('content', checked);
    if (checked !== null) {
      await recordDenial(scope, checked);
      throw denialError(checked);
    }
  }
  const stored = await storeEvent(scope, event);
  const content = stored.content as unknown as Content;
  await afterRun(scope, scope.context(agentName), content);
  return completed(scope, content);
}

/** The result of a completed invocation. */
export function completed(scope: InvocationScope, output: Content): RunResult {
  return Object.freeze({ status: 'completed', invocation_id: scope.invocationId, session_id: scope.ref.sessionId, output });
}

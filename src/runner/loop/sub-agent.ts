import { checkPolicy } from './policy-gate';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import type { CompiledAgent } from './agent-tree';
import type { JsonObject, JsonValue } from '../content.types';
import type { InvocationScope } from '../invocation/invocation-scope';
import { textContent } from './message';
import type { ToolCall } from '../models/model.types';
import { runAgentLoop } from './agent-loop';

/** A sub-agent call's end: its output as the tool result, or the deny decision of its agent check (audited when its response is committed). */
export type SubAgentOutcome = { readonly denied: true; readonly decision: PolicyDecision } | { readonly denied: false; readonly result: JsonValue };

/**
 * Runs a sub-agent called as a tool (spec 03 §6.12): `checkAgent` on its input before any of its
 * model work, then its own loop under the same invocation and permit. It cannot pause.
 */
export async function runSubAgent(scope: InvocationScope, sub: CompiledAgent, _call: ToolCall, args: JsonObject): Promise<SubAgentOutcome> {
  const input = args.input as string;
  const policy = scope.options.policy;
  if (policy !== null) {
    const checked = checkPolicy(scope, 'agent', sub.name, input);
    if (checked !== null) return { denied: true, decision: checked };
  }
  const ended = await runAgentLoop(scope, sub, [{ role: 'user', content: textContent('user', input) }], true);
  return { denied: false, result: { output: ended.kind === 'final' ? ended.text : '' } };
}

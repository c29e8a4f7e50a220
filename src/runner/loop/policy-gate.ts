import { screenCheck, type ScreenedCheck } from '../../policy/runtime-policy';
import type { PolicyDecision, PolicyOperation } from '../../policy/runtime-policy.types';
import type { InvocationScope } from '../invocation/invocation-scope';
import { traceRunner } from '../tracing/runner-trace';

const OPERATIONS: Readonly<Record<ScreenedCheck, PolicyOperation>> = Object.freeze({
  agent: 'agent_invocation',
  tool: 'tool_call',
  undeclared_tool: 'tool_call',
  content: 'content',
});

/**
 * One check of the Runner's policy: `null` when allowed, else the deny decision. Its outcome goes to
 * the trace store as `runner.policy.decision` (operation, outcome, reason only). Without a policy,
 * every check passes. `approvedBy` (a confirmed call's approver) goes on a tool call's decision.
 */
export function checkPolicy(scope: InvocationScope, check: ScreenedCheck, subject: unknown, value: unknown, agent?: string, approvedBy?: string): PolicyDecision | null {
  const policy = scope.options.policy;
  if (policy === null) return null;
  const denied = screenCheck(policy, check, subject, value, approvedBy);
  traceRunner(scope, 'runner.policy.decision', {
    ...(agent === undefined ? {} : { agent }),
    attributes: { phase: OPERATIONS[check], outcome: denied === null ? 'allow' : 'deny', status: denied === null ? 'allowed' : denied.reason },
  });
  return denied;
}

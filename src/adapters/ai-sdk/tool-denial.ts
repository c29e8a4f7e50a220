import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import type { PolicyDecisionSummary } from '../../policy/runtime-policy.types';
import { RunnerError } from '../../runner/runner.errors';

/**
 * What a denied tool call carries: the policy decision's content-free summary (the decision id, the
 * policy, the operation, `outcome: 'deny'` and the reason). Never the tool's name, arguments or result.
 */
export interface ToolDenial extends PolicyDecisionSummary {
  readonly outcome: 'deny';
}

/**
 * The error a guarded tool throws from `execute` when the runtime policy denies the call (operation
 * `tool_call`) or its result (operation `content`, the tool-result budget): `RunnerError` with code
 * `runtime_policy_denied` and the {@link ToolDenial} as `details`. The AI SDK turns it into a
 * `tool-error` part (`tool-output-error` in a UI message stream), and the model's next prompt holds it
 * as the call's `tool-result` with `output: {type: 'error-text', value: 'RunnerError: runtime_policy_denied {…}'}`.
 */
export type ToolDenialError = RunnerError & { readonly code: 'runtime_policy_denied'; readonly details: ErrorDetails & ToolDenial };

/**
 * True when a tool error (the `error` of a `tool-error` part, or what `execute` threw) is a denial by
 * the runtime policy rather than a failure of the tool. A brand check: no code of `error` runs.
 *
 * @example
 * const result = await generateText({ model, tools: guardTools(tools, { policy, auditSink }), prompt });
 * for (const part of result.steps.flatMap((step) => step.content)) {
 *   if (part.type === 'tool-error' && isToolDenial(part.error)) console.log(part.toolName, part.error.details.reason);
 * }
 */
export function isToolDenial(error: unknown): error is ToolDenialError {
  return RunnerError.isRunnerError(error) && error.code === 'runtime_policy_denied';
}

import { denialError } from '../../runner/loop/event-recorder';
import { resolveGuardToolsOptions, type GuardToolsOptions } from './ai-sdk-options';
import type { ToolSet } from './ai-sdk.types';
import type { PolicyGuard } from './policy-guard';
import { callFacts, ToolCallVerdicts } from './tool-call-verdicts';
import { checkedChunks, checkToolResult } from './tool-result-guard';
import { readToolSet, type ToolProperties } from './tool-set-reader';

type Hook = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Returns the same tools with the runtime policy in front of each: `checkTool(name, input)` runs on
 * the first hook the AI SDK calls for a tool call (`onInputAvailable`, then `needsApproval`, then
 * `execute`), once per call.
 *
 * - **Denied**: the decision goes to the audit sink first (a failed write fails the call with
 *   `runtime_policy_audit_persistence_failed`), the tool's own `onInputAvailable` and `execute` never
 *   run, `needsApproval` answers `false` (a denial never becomes an approval request) and the call ends
 *   as a tool error: `execute` throws a `ToolDenialError` (`RunnerError('runtime_policy_denied')`
 *   with the decision's content-free summary), which the SDK reports as a `tool-error` part
 *   (`tool-output-error` in a UI stream) and sends the model as `{type: 'error-text'}` output.
 *   `isToolDenial(part.error)` tells a denial from a failure of the tool.
 * - **Allowed**: the tool runs; its result passes the tool-result budget (`maxContentBytes`). A result
 *   over it or not JSON is audited and the call ends as a tool error the same way; the result is dropped.
 *
 * Every tool needs an `execute` function; tools the SDK does not run on the server (client-side or
 * provider-executed ones) are refused, so nothing in a guarded set runs unguarded. Bad input is a
 * `RunnerError` (`invalid_runner_options` with `details.field`, and for one tool `index` and
 * `reason`; `invalid_runner_runtime_policy` for the policy), never a crash.
 *
 * @example
 * const policy = RuntimePolicy.compile({ agents: { allow: ['support'] }, tools: { allow: ['search'] } });
 * const tools = guardTools(
 *   { search: tool({ inputSchema: z.object({ q: z.string() }), execute: ({ q }) => searchIndex(q) }),
 *     shell: tool({ inputSchema: z.object({ cmd: z.string() }), execute: ({ cmd }) => run(cmd) }) },
 *   { policy, auditSink: auditLog },
 * );
 * await generateText({ model, tools, stopWhen: stepCountIs(5), prompt });
 * // a call of `shell` never runs: the step holds a `tool-error` part whose error passes `isToolDenial`
 */
export function guardTools<TOOLS extends ToolSet>(tools: TOOLS, options: GuardToolsOptions): TOOLS {
  const guard = resolveGuardToolsOptions(options);
  const entries = readToolSet(tools);
  const verdicts = new ToolCallVerdicts(guard);
  const guarded: Record<string, unknown> = {};
  for (const [name, tool] of entries) {
    Object.defineProperty(guarded, name, { value: guardTool(name, tool, guard, verdicts), enumerable: true, writable: true, configurable: true });
  }
  return guarded as TOOLS;
}

function guardTool(name: string, tool: ToolProperties, guard: PolicyGuard, verdicts: ToolCallVerdicts): ToolProperties {
  const execute = tool.execute as Hook;
  const onInputAvailable = tool.onInputAvailable as Hook | undefined;
  const needsApproval = tool.needsApproval as boolean | Hook | undefined;
  const guarded = Object.defineProperties({}, Object.getOwnPropertyDescriptors(tool)) as Record<string, unknown>;

  guarded.execute = function (this: unknown, input: unknown, options: unknown): unknown {
    const verdict = verdicts.take(name, input, callFacts(options));
    if (verdict.decision.outcome === 'deny') {
      return verdict.recorded.then(() => {
        throw denialError(verdict.decision);
      });
    }
    const result = execute.call(this, input, options);
    if (isAsyncIterable(result)) return checkedChunks(guard, result);
    return Promise.resolve(result).then((output) => checkToolResult(guard, output));
  };

  guarded.onInputAvailable = async function (this: unknown, options: unknown): Promise<void> {
    const facts = callFacts(options);
    const verdict = verdicts.verdictOf(name, facts.input, facts);
    await verdict.recorded;
    if (verdict.decision.outcome === 'allow' && onInputAvailable !== undefined) await onInputAvailable.call(this, options);
  };

  if (needsApproval === true || typeof needsApproval === 'function') {
    guarded.needsApproval = async function (this: unknown, input: unknown, options: unknown): Promise<boolean> {
      const verdict = verdicts.verdictOf(name, input, callFacts(options));
      await verdict.recorded;
      if (verdict.decision.outcome === 'deny') return false;
      return needsApproval === true ? true : Boolean(await needsApproval.call(this, input, options));
    };
  }
  return guarded;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

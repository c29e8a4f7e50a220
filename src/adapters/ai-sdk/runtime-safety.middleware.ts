import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { denialError } from '../../runner/loop/event-recorder';
import { resolveMiddlewareOptions, type RuntimeSafetyMiddlewareOptions } from './ai-sdk-options';
import type { LanguageModelMiddleware, ModelCallParams, ModelStreamPart, ModelStreamResult } from './ai-sdk.types';
import { responseTextOf, userTextOf } from './model-call-content';
import type { PolicyGuard } from './policy-guard';
import { streamedOutputBudget } from './streamed-output-budget';

/**
 * A language-model middleware (for `wrapLanguageModel`) that puts the runtime policy around every
 * model call, `generateText` and `streamText` alike (each step of a tool loop is one call):
 *
 * 1. before the call, `checkAgent(agent, input)` on the text of the prompt's user messages: an agent
 *    the policy does not allow, or input over `maxContentBytes`, is denied before the model is called;
 * 2. after it, `checkContent('model_output', text)` on the response's text.
 *
 * A denial is audited first and then fails the call with `RunnerError('runtime_policy_denied')`,
 * whose `details` are the five-key summary of the decision; a failed audit write fails it with
 * `runtime_policy_audit_persistence_failed`. A generated response that is denied is never returned.
 * A streamed one is checked as it streams: the delta that would cross the budget is not emitted and
 * the stream errors (already emitted deltas stay within the budget). Options are validated here:
 * `invalid_runner_options` (`details.field`) or `invalid_runner_runtime_policy`.
 *
 * @example
 * const model = wrapLanguageModel({
 *   model: openai('gpt-4o-mini'),
 *   middleware: runtimeSafetyMiddleware({ policy, agent: 'support', auditSink: auditLog }),
 * });
 * await generateText({ model, prompt: 'Where is my parcel?' }); // RunnerError 'runtime_policy_denied' when denied
 */
export function runtimeSafetyMiddleware(options: RuntimeSafetyMiddlewareOptions): LanguageModelMiddleware {
  const { guard, agent } = resolveMiddlewareOptions(options);
  return {
    specificationVersion: 'v4',
    wrapGenerate: async ({ doGenerate, params }) => {
      await admit(guard, agent, params);
      const result = await doGenerate();
      await settle(guard, guard.decide('content', 'model_output', responseTextOf(result.content)));
      return result;
    },
    wrapStream: async ({ doStream, params }) => {
      try {
        await admit(guard, agent, params);
      } catch (error) {
        // streamText reports a rejected doStream as a quiet error part; an errored stream fails every reader
        return { stream: erroredStream(error) };
      }
      const result = await doStream();
      return { ...result, stream: result.stream.pipeThrough(streamedOutputBudget(guard)) };
    },
  };
}

/** The agent check on the call's input; the model is not called when it denies. */
function admit(guard: PolicyGuard, agent: string, params: ModelCallParams): Promise<void> {
  return settle(guard, guard.decide('agent', agent, userTextOf(promptOf(params))));
}

/** Nothing for an allow; a denial is audited, then thrown as the Runner throws it. */
async function settle(guard: PolicyGuard, decision: PolicyDecision): Promise<void> {
  if (decision.outcome === 'allow') return;
  await guard.recordDenial(decision);
  throw denialError(decision);
}

function promptOf(params: ModelCallParams): unknown {
  return typeof params === 'object' && params !== null ? params.prompt : undefined;
}

function erroredStream(error: unknown): ModelStreamResult['stream'] {
  return new ReadableStream<ModelStreamPart>({
    start(controller) {
      controller.error(error);
    },
  });
}

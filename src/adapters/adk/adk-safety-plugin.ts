import { isProviderOverloadError } from '../../admission/model-call-reports';
import { canonicalJson } from '../../json/canonical-json';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { denialError, denialRecord } from '../../runner/loop/event-recorder';
import { RunnerError } from '../../runner/runner.errors';
import type { AdkContent, AdkEvent, BaseAgent, BasePlugin, BaseTool, Context, InvocationContext, LlmRequest, LlmResponse, Session } from './adk.types';
import { resolveGuardOptions, sharedPartsOf, type AdkGuardOptions } from './adk-guard-options';
import { failed, invocationOf, type AdkInvocation } from './adk-invocation';
import { loadAdk } from './adk-peer';
import { ADK_SAFETY_PLUGIN_NAME, AdkPluginChain, readPlugins } from './adk-plugin-chain';
import type { AdkPolicyGuard } from './adk-policy-guard';
import { isFinalOutput, respondedCalls, sameAsChecked, withResponses } from './adk-event-parts';

/**
 * Options of {@link AdkSafetyPlugin} used on its own, outside an `AdkRunnerFacade`.
 *
 * @example
 * const options: AdkSafetyPluginOptions = { runtimePolicy: policy, auditSink, plugins: [new LoggingPlugin()] };
 */
export interface AdkSafetyPluginOptions extends AdkGuardOptions {
  /** The application's ADK plugins, run inside the safety plugin in this order. @default [] */
  readonly plugins?: readonly BasePlugin[];
}

type ToolParams = { tool: BaseTool; toolArgs: Record<string, unknown>; toolContext: Context };
type Answer = Record<string, unknown> | undefined;

const TOOL_ERROR = (): Record<string, unknown> => ({ success: false, error: { kind: 'tool_error' } });

/**
 * The ADK plugin of spec 03 §11 that enforces the runtime policy inside ADK's loop. It is meant to
 * be the only plugin ADK knows: the application's plugins run inside it (with ADK's chain
 * semantics), so every check sees what their callbacks made of a value, and a denial cannot be
 * undone by any of them.
 *
 * - `beforeToolCallback` runs `checkTool(tool.name, args)` first; on deny it writes the audit event
 *   and **returns** the denial record as the tool's result — it never throws, so ADK skips the
 *   other callbacks, the tool and its confirmation. Arguments a plugin changed in place are checked
 *   again.
 * - `afterToolCallback` returns that record again for a denied call (so no later after-callback can
 *   replace it), leaves a call awaiting confirmation alone, and applies the tool-result budget
 *   (`checkContent('tool_result', …)`) to the result as the application's plugins left it.
 * - `onToolErrorCallback` answers `{success: false, error: {kind: 'tool_error'}}` unless a plugin
 *   answers, so no exception text reaches the model or the session.
 * - `onEventCallback` applies the final-output budget (`checkContent('model_output', …)`) to every
 *   agent's final content before ADK stores it (a deny records `runtime_policy_denied` and aborts the
 *   run), and measures tool results an agent's own `afterToolCallback` substituted after every
 *   plugin. Content a `beforeRunCallback` returns is checked the same way before ADK stores it.
 *
 * **A denial is a tool error in ADK's convention.** The denied call's function response is the
 * Runner's denial record `{success: false, error: {kind: 'runtime_policy_denied', decision_id,
 * policy_id, operation, outcome, reason}}`: it has the `error` key by which ADK, and Gemini's
 * `FunctionResponse` ("use the `error` key for error details"), mark a failed call (ADK answers a
 * tool that throws with `{error: message}`), and no `result` or `output` key, so the model reads it as
 * a failed call. A UI reading ADK events tells a denial by `response.error.kind ===
 * 'runtime_policy_denied'` (a tool failure is `'tool_error'`). It carries the decision's content-free
 * summary, never the call's arguments. The plugin returns it rather than throwing because ADK catches
 * only what the tool itself throws: a throwing `beforeToolCallback` would end the whole run.
 *
 * A class that does not extend ADK's `BasePlugin`, so the entry point loads without the peer: ADK
 * 2.0 recognises plugins by their methods, and this one has every callback `BasePlugin` declares.
 *
 * @example
 * const safety = new AdkSafetyPlugin({ runtimePolicy: { agents: { allow: 'all' }, tools: { allow: ['get_weather'] } }, plugins: [new LoggingPlugin()] });
 * const runner = new Runner({ appName: 'weather', agent, sessionService, plugins: [safety] });
 */
export class AdkSafetyPlugin implements BasePlugin {
  readonly name: string = ADK_SAFETY_PLUGIN_NAME;
  readonly #guard: AdkPolicyGuard;
  readonly #chain: AdkPluginChain;
  /** The denial records this plugin returned, recognised again by identity. */
  readonly #records = new WeakSet<object>();
  /** Results `afterToolCallback` measured, by call id, until their event is stored; per run's session object, so nothing outlives a run. */
  readonly #measured = new WeakMap<Session, Map<string, unknown>>();

  /**
   * @throws AdkAdapterError without the `@google/adk` peer
   * @throws RunnerError `invalid_runner_options {field}`, `invalid_runner_runtime_policy {reason}`
   */
  constructor(options: AdkSafetyPluginOptions) {
    loadAdk();
    const shared = sharedPartsOf(options);
    if (shared !== undefined) {
      this.#guard = shared.guard;
      this.#chain = new AdkPluginChain(shared.plugins);
      return;
    }
    const { guard, values } = resolveGuardOptions(options, { plugins: (value) => readPlugins(value) !== null });
    this.#guard = guard;
    this.#chain = new AdkPluginChain(readPlugins(values.plugins ?? []) as readonly BasePlugin[]);
  }

  async onUserMessageCallback(params: { invocationContext: InvocationContext; userMessage: AdkContent }): Promise<AdkContent | undefined> {
    return (await this.#chain.run('onUserMessageCallback', params, invocationOf(params.invocationContext))) as AdkContent | undefined;
  }

  async beforeRunCallback(params: { invocationContext: InvocationContext }): Promise<AdkContent | undefined> {
    const invocation = invocationOf(params.invocationContext);
    const output = (await this.#chain.run('beforeRunCallback', params, invocation)) as AdkContent | undefined;
    if (output !== undefined) await this.#checkFinal(params.invocationContext, output, invocation);
    return output;
  }

  async onEventCallback(params: { invocationContext: InvocationContext; event: AdkEvent }): Promise<AdkEvent | undefined> {
    const context = params.invocationContext;
    const invocation = invocationOf(context);
    const replaced = (await this.#chain.run('onEventCallback', params, invocation)) as AdkEvent | undefined;
    let event = replaced ?? params.event;
    event = await this.#checkResponses(context, event, invocation);
    if (isFinalOutput(event)) await this.#checkFinal(context, event.content as AdkContent, invocation);
    return event === params.event ? undefined : event;
  }

  async afterRunCallback(params: { invocationContext: InvocationContext }): Promise<void> {
    await this.#chain.run('afterRunCallback', params, invocationOf(params.invocationContext));
  }

  async beforeToolCallback(params: ToolParams): Promise<Answer> {
    const { tool, toolArgs, toolContext } = params;
    const context = toolContext.invocationContext;
    const invocation = invocationOf(context);
    const denied = this.#guard.screen('tool', tool.name, toolArgs);
    if (denied !== null) return this.#deny(context, denied, invocation);
    const before = this.#guard.policy === null ? null : snapshot(toolArgs);
    const answer = (await this.#chain.run('beforeToolCallback', params, invocation)) as Answer;
    if (answer === undefined && before !== null && snapshot(toolArgs) !== before) {
      const again = this.#guard.screen('tool', tool.name, toolArgs);
      if (again !== null) return this.#deny(context, again, invocation);
    }
    return answer;
  }

  async afterToolCallback(params: ToolParams & { result: Record<string, unknown> }): Promise<Answer> {
    const { toolContext, result } = params;
    if (typeof result === 'object' && result !== null && this.#records.has(result)) return result;
    const context = toolContext.invocationContext;
    const invocation = invocationOf(context);
    const replaced = (await this.#chain.run('afterToolCallback', params, invocation)) as Answer;
    if (replaced === undefined && awaitsConfirmation(toolContext)) return undefined;
    const effective: unknown = replaced === undefined ? result : replaced;
    if (effective === undefined || effective === null) return replaced;
    const denied = this.#guard.screen('content', 'tool_result', effective);
    if (denied !== null) return this.#deny(context, denied, invocation);
    if (toolContext.functionCallId !== undefined && this.#guard.policy !== null) this.#measuredOf(context.session).set(toolContext.functionCallId, effective);
    return replaced;
  }

  async onToolErrorCallback(params: ToolParams & { error: Error }): Promise<Answer> {
    const invocation = invocationOf(params.toolContext.invocationContext);
    const answer = (await this.#chain.run('onToolErrorCallback', params, invocation)) as Answer;
    if (answer !== undefined) return answer;
    const { error } = params;
    if (RunnerError.isRunnerError(error)) {
      // a nested ADK run (an AgentTool) failed on this package's own checks
      if (error.code === 'runtime_policy_denied') return { success: false, error: { kind: 'runtime_policy_denied', ...error.details } };
      if (error.code === 'runtime_policy_audit_persistence_failed') throw failed(invocation, error);
    }
    return TOOL_ERROR();
  }

  async beforeAgentCallback(params: { agent: BaseAgent; callbackContext: Context }): Promise<AdkContent | undefined> {
    return (await this.#chain.run('beforeAgentCallback', params, invocationOf(params.callbackContext.invocationContext))) as AdkContent | undefined;
  }

  async afterAgentCallback(params: { agent: BaseAgent; callbackContext: Context }): Promise<AdkContent | undefined> {
    return (await this.#chain.run('afterAgentCallback', params, invocationOf(params.callbackContext.invocationContext))) as AdkContent | undefined;
  }

  async beforeNodeCallback(params: Parameters<BasePlugin['beforeNodeCallback']>[0]): Promise<unknown> {
    return this.#chain.run('beforeNodeCallback', params, undefined);
  }

  async afterNodeCallback(params: Parameters<BasePlugin['afterNodeCallback']>[0]): Promise<unknown> {
    return this.#chain.run('afterNodeCallback', params, undefined);
  }

  async beforeModelCallback(params: { callbackContext: Context; llmRequest: LlmRequest }): Promise<LlmResponse | undefined> {
    const invocation = invocationOf(params.callbackContext.invocationContext);
    if (invocation !== undefined) invocation.modelCallStartedAt = performance.now();
    return (await this.#chain.run('beforeModelCallback', params, invocation)) as LlmResponse | undefined;
  }

  async afterModelCallback(params: { callbackContext: Context; llmResponse: LlmResponse }): Promise<LlmResponse | undefined> {
    const invocation = invocationOf(params.callbackContext.invocationContext);
    modelCallEnded(invocation, params.llmResponse);
    return (await this.#chain.run('afterModelCallback', params, invocation)) as LlmResponse | undefined;
  }

  async onModelErrorCallback(params: { callbackContext: Context; llmRequest: LlmRequest; error: Error }): Promise<LlmResponse | undefined> {
    const invocation = invocationOf(params.callbackContext.invocationContext);
    modelCallEnded(invocation, params.error, true);
    return (await this.#chain.run('onModelErrorCallback', params, invocation)) as LlmResponse | undefined;
  }

  async beforeToolSelection(params: Parameters<BasePlugin['beforeToolSelection']>[0]): Promise<Readonly<Record<string, BaseTool>> | undefined> {
    return (await this.#chain.run('beforeToolSelection', params, invocationOf(params.callbackContext.invocationContext))) as Readonly<Record<string, BaseTool>> | undefined;
  }

  async beforeContextCompaction(params: Parameters<BasePlugin['beforeContextCompaction']>[0]): Promise<void> {
    await this.#chain.run('beforeContextCompaction', params, invocationOf(params.invocationContext));
  }

  async afterContextCompaction(params: Parameters<BasePlugin['afterContextCompaction']>[0]): Promise<void> {
    await this.#chain.run('afterContextCompaction', params, invocationOf(params.invocationContext));
  }

  /** Audit event first, then the denial record as the answer; a failed audit write fails the run. */
  async #deny(context: InvocationContext, decision: PolicyDecision, invocation: AdkInvocation | undefined): Promise<Record<string, unknown>> {
    await this.#record(context, decision, invocation);
    const record = denialRecord(decision) as Record<string, unknown>;
    this.#records.add(record);
    return record;
  }

  async #record(context: InvocationContext, decision: PolicyDecision, invocation: AdkInvocation | undefined): Promise<void> {
    try {
      await this.#guard.recordDenial(context, decision, invocation);
    } catch (error) {
      throw failed(invocation, error as RunnerError);
    }
  }

  /** The `model_output` check of content about to be stored as an agent's final answer. */
  async #checkFinal(context: InvocationContext, content: AdkContent, invocation: AdkInvocation | undefined): Promise<void> {
    const denied = this.#guard.screen('content', 'model_output', content);
    if (denied === null) return;
    await this.#record(context, denied, invocation);
    throw failed(invocation, denialError(denied));
  }

  /** Tool results `afterToolCallback` did not see as stored (an agent's own after-callback replaced them). */
  async #checkResponses(context: InvocationContext, event: AdkEvent, invocation: AdkInvocation | undefined): Promise<AdkEvent> {
    if (this.#guard.policy === null) return event;
    const replacements = new Map<number, Record<string, unknown>>();
    const measuredResults = this.#measuredOf(context.session);
    for (const { index, id, response } of respondedCalls(event)) {
      const measured = id === undefined ? undefined : measuredResults.get(id);
      if (id !== undefined) measuredResults.delete(id);
      if ((typeof response === 'object' && response !== null && this.#records.has(response)) || (measured !== undefined && sameAsChecked(response, measured))) continue;
      const denied = this.#guard.screen('content', 'tool_result', response);
      if (denied !== null) replacements.set(index, await this.#deny(context, denied, invocation));
    }
    return replacements.size === 0 ? event : withResponses(event, replacements);
  }

  #measuredOf(session: Session): Map<string, unknown> {
    let measured = this.#measured.get(session);
    if (measured === undefined) this.#measured.set(session, (measured = new Map()));
    return measured;
  }
}

/** True while ADK holds the call for a human's confirmation (the tool asked for one on this call). */
function awaitsConfirmation(toolContext: Context): boolean {
  const id = toolContext.functionCallId;
  return id !== undefined && toolContext.actions.requestedToolConfirmations?.[id] !== undefined;
}

/** The canonical text of arguments that passed the check (so they are JSON), to see a later change. */
function snapshot(args: unknown): string | null {
  try {
    return canonicalJson(args);
  } catch {
    return null;
  }
}

/**
 * Reports an ADK model call on the run's permit: an error whose `status` is 429 or 503 as
 * `overloaded`; a response carrying ADK's `errorCode` 429 / 503 (or `RESOURCE_EXHAUSTED`) too.
 */
function modelCallEnded(invocation: AdkInvocation | undefined, outcome: unknown, failed = false): void {
  if (invocation === undefined || invocation.modelCallStartedAt === null) return;
  const latencyMs = performance.now() - invocation.modelCallStartedAt;
  invocation.modelCallStartedAt = null;
  const errorCode = failed ? undefined : (outcome as { errorCode?: unknown } | undefined)?.errorCode;
  const overloaded = failed ? isProviderOverloadError(outcome) : errorCode === '429' || errorCode === '503' || errorCode === 'RESOURCE_EXHAUSTED';
  invocation.modelReports.modelCallEnded(latencyMs, overloaded);
}

import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { denialRecord } from '../../runner/loop/event-recorder';
import { RunnerError } from '../../runner/runner.errors';
import type { AdkContent, BaseAgent, Context } from './adk.types';
import { resolveGuardOptions, sharedPartsOf, type AdkGuardOptions } from './adk-guard-options';
import { failed, invocationOf } from './adk-invocation';
import { loadAdk, type AdkModule } from './adk-peer';
import type { AdkPolicyGuard } from './adk-policy-guard';

/**
 * Options of {@link installAgentGuards}.
 *
 * @example
 * const options: AgentGuardOptions = { runtimePolicy: { agents: { allow: ['router', 'support'] } } };
 */
export type AgentGuardOptions = AdkGuardOptions;

type AgentCallback = BaseAgent['beforeAgentCallback'][number];

const GUARD = Symbol('nest-agent-runtime.adk.agentGuard');

/** The guard each agent was last given; a facade run uses its own guard instead. */
const configured = new WeakMap<BaseAgent, AdkPolicyGuard>();

/**
 * Prepends a guard to the `beforeAgentCallback` list of every sub-agent below `root` (its
 * `subAgents`, recursively, and the agents of `AgentTool`s in `LlmAgent` tools; not `root`, which
 * the `AdkRunnerFacade` checks before any ADK code runs). The guard runs `checkAgent(agent.name,
 * userContent)` on the invocation's user content before the agent does anything; on deny it writes
 * the audit event and ends that agent without a model call, its answer being the denial record as
 * JSON text. Idempotent: an agent holds at most one guard, and installing again only rebinds it
 * to the new options. Inside an `AdkRunnerFacade` run the facade's policy applies. Returns the
 * names of the guarded agents.
 *
 * ADK's `clone()` rebuilds an agent from its config, so install guards on the clone, not before.
 *
 * @example
 * const root = new LlmAgent({ name: 'router', model, subAgents: [billing, support] });
 * installAgentGuards(root, { runtimePolicy: { agents: { allow: ['router', 'support'] } } }); // ['billing', 'support']
 * @throws AdkAdapterError without the `@google/adk` peer
 * @throws RunnerError `invalid_runner_options {field}` (also when `root` is not an ADK agent), `invalid_runner_runtime_policy {reason}`
 */
export function installAgentGuards(root: BaseAgent, options: AgentGuardOptions): readonly string[] {
  const adk = loadAdk();
  if (!adk.isBaseAgent(root)) throw new RunnerError('invalid_runner_options', { field: 'root' });
  const guard = sharedPartsOf(options)?.guard ?? resolveGuardOptions(options, {}).guard;
  const guarded: string[] = [];
  for (const agent of subAgentsOf(adk, root)) {
    configured.set(agent, guard);
    const callbacks = agent.beforeAgentCallback;
    if (!callbacks.some((callback) => (callback as { [GUARD]?: true })[GUARD] === true)) callbacks.unshift(agentGuard(agent));
    guarded.push(agent.name);
  }
  return Object.freeze(guarded);
}

/** Every agent reachable from `root` through sub-agents and AgentTools, `root` excluded, each once. */
function subAgentsOf(adk: AdkModule, root: BaseAgent): BaseAgent[] {
  const seen = new Set<BaseAgent>([root]);
  const found: BaseAgent[] = [];
  const pending: BaseAgent[] = [root];
  while (pending.length > 0) {
    const agent = pending.shift() as BaseAgent;
    const children = [...agent.subAgents];
    // ADK 2.0 declares AgentTool's `agent` private, but it is a plain property
    if (adk.isLlmAgent(agent)) for (const tool of agent.tools) if (adk.isAgentTool(tool)) children.push((tool as unknown as { agent: BaseAgent }).agent);
    for (const child of children) {
      if (!adk.isBaseAgent(child) || seen.has(child)) continue;
      seen.add(child);
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function agentGuard(agent: BaseAgent): AgentCallback {
  const guard = async (callbackContext: Context): Promise<AdkContent | undefined> => {
    const context = callbackContext.invocationContext;
    const invocation = invocationOf(context);
    const policyGuard = invocation?.guard ?? configured.get(agent);
    const denied = policyGuard?.screen('agent', agent.name, callbackContext.userContent ?? '') ?? null;
    if (denied === null || policyGuard === undefined) return undefined;
    try {
      await policyGuard.recordDenial(context, denied, invocation);
    } catch (error) {
      throw failed(invocation, error as RunnerError);
    }
    return deniedAnswer(denied);
  };
  return Object.assign(guard, { [GUARD]: true as const });
}

/** What a denied agent says: the model-visible denial record, as JSON text. */
function deniedAnswer(decision: PolicyDecision): AdkContent {
  return { role: 'model', parts: [{ text: JSON.stringify(denialRecord(decision)) }] };
}

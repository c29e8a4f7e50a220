import { resolveAdmissionConfig, type AdmissionConfig, type ResolvedAdmissionConfig } from '../../admission/admission-config';
import type { RuntimePolicy } from '../../policy/runtime-policy';
import { isValidId } from '../../shared/ids/id-rule';

/** Where the agent ids that keep their own label value come from. */
export interface ConfiguredAgentSources {
  /** Ids the application names itself (`MetricsModule` option `agents`). */
  readonly agents?: readonly string[];
  /** The admission configuration: the keys of `agentLimits`. */
  readonly admission?: ResolvedAdmissionConfig;
  /** The runtime policy: the agents its `agents` rule allows or denies by name (not `'all'`). */
  readonly policy?: Pick<RuntimePolicy, 'describe'>;
  /** The registered runners: their root agents' names. */
  readonly runners?: readonly { readonly agent: { readonly name: string } }[];
}

/**
 * The configured agent ids, each once, in the order of the sources above. Ids come from
 * configuration only, never from a request, so the `agent_id` label stays bounded.
 */
export function configuredAgentIds(sources: ConfiguredAgentSources): string[] {
  const ids = new Set<string>(sources.agents ?? []);
  for (const id of sources.admission?.agentLimits.keys() ?? []) ids.add(id);
  for (const id of sources.admission?.flow.adaptive.keys() ?? []) ids.add(id);
  for (const id of sources.admission?.flow.agentCostLimits.keys() ?? []) ids.add(id);
  for (const id of sources.admission?.flow.agentRates.keys() ?? []) ids.add(id);
  const description = sources.policy?.describe();
  if (description && 'agents' in description) {
    for (const selector of [description.agents.allow, description.agents.deny]) if (selector !== 'all') for (const id of selector) ids.add(id);
  }
  for (const runner of sources.runners ?? []) ids.add(runner.agent.name);
  return [...ids].filter((id) => isValidId(id));
}

/** The tenants named in the admission configuration (spec 09 §7): the only tenant ids a label may carry. */
export function configuredTenantIds(admission: ResolvedAdmissionConfig | undefined): string[] {
  return [...(admission?.flow.namedTenants ?? [])];
}

/** The admission configuration with its defaults applied; `undefined` for one the controller would refuse. */
export function resolvedAdmissionConfig(config: AdmissionConfig | undefined): ResolvedAdmissionConfig | undefined {
  try {
    return resolveAdmissionConfig(config);
  } catch {
    return undefined;
  }
}

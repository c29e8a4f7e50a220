import type { AdmissionConfig } from '../admission/admission-config';
import type { RuntimePolicySpec } from '../policy/runtime-policy-compiler';

/** The demo tenant with a request rate (`rate_limited` with `Retry-After` is easy to see with `curl`). */
export const TRIAL_TENANT = 'trial';

/**
 * Admission settings of the reference service, from the environment: small limits so that
 * queueing, rejection and fair share across tenants are easy to see with `curl`. Every tenant may hold
 * `ADMISSION_TENANT_LIMIT` permits at once (3 of the global 4: one tenant never fills the service) and
 * tenants share the queue equally (start-time fair queueing, equal weights); the tenant
 * {@link TRIAL_TENANT} may start `ADMISSION_TRIAL_REQUESTS_PER_MINUTE` invocations a minute, at most
 * `ADMISSION_TRIAL_BURST` at once.
 */
export function referenceAdmissionConfig(env: NodeJS.ProcessEnv = process.env): AdmissionConfig {
  const number = (name: string, fallback: number) => (env[name] === undefined ? fallback : Number(env[name]));
  return {
    globalLimit: number('ADMISSION_GLOBAL_LIMIT', 4),
    defaultAgentLimit: number('ADMISSION_AGENT_LIMIT', 2),
    defaultTenantLimit: number('ADMISSION_TENANT_LIMIT', 3),
    overflow: (env.ADMISSION_OVERFLOW as AdmissionConfig['overflow']) ?? 'queue',
    maxQueue: number('ADMISSION_MAX_QUEUE', 16),
    defaultQueueTimeoutMs: number('ADMISSION_QUEUE_TIMEOUT_MS', 10_000),
    drainTimeoutMs: number('ADMISSION_DRAIN_TIMEOUT_MS', 10_000),
    rates: {
      tenants: { [TRIAL_TENANT]: { requestsPerMinute: number('ADMISSION_TRIAL_REQUESTS_PER_MINUTE', 6), burst: number('ADMISSION_TRIAL_BURST', 2) } },
    },
  };
}

/**
 * The reference service's runtime policy: agents `helper`, `helper-draft`, `operator`, `batch` and `assistant` may
 * run, tools `search`, `deploy` and `wait` may be called, tool `shell` is explicitly denied, arguments up to 1 KiB,
 * content up to 4 KiB.
 * `REFERENCE_POLICY_JSON` replaces it with a policy spec of your own.
 */
export function referencePolicySpec(env: NodeJS.ProcessEnv = process.env): RuntimePolicySpec {
  if (env.REFERENCE_POLICY_JSON) return JSON.parse(env.REFERENCE_POLICY_JSON) as RuntimePolicySpec;
  return {
    id: 'reference-policy',
    agents: { allow: ['helper', 'helper-draft', 'operator', 'batch', 'assistant'] },
    tools: { allow: ['search', 'shell', 'deploy', 'wait'], deny: ['shell'] },
    maxArgumentBytes: 1024,
    maxContentBytes: 4096,
  };
}

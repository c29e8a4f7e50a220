import { isPlainObject, isSafeIntegerAtLeast } from '../shared/plain-object';
import { RuntimePolicy } from './runtime-policy';
import type { RuntimePolicyModuleOptions } from './runtime-policy.constants';
import { RuntimePolicyError } from './runtime-policy.errors';

const KNOWN = new Set(['policy', 'auditLog', 'auditDecisions', 'auditTimeoutMs', 'dataSourceName']);

const invalid = (option: string) => new RuntimePolicyError('invalid_runtime_policy_module_options', { option });

/** Validated module options with defaults; `policy` is always a compiled, valid policy. */
export interface ResolvedRuntimePolicyModuleOptions {
  readonly policy: RuntimePolicy;
  readonly auditLog: RuntimePolicyModuleOptions['auditLog'];
  readonly auditDecisions: 'deny' | 'all';
  readonly auditTimeoutMs: number;
  readonly dataSourceName: string | undefined;
}

/**
 * Validates the module options (unknown keys and bad values → `invalid_runtime_policy_module_options`
 * with `details.option`) and compiles a policy spec; a compile error propagates as is.
 */
export function resolveRuntimePolicyModuleOptions(options: unknown): ResolvedRuntimePolicyModuleOptions {
  if (!isPlainObject(options)) throw invalid('options');
  const unknown = Object.keys(options).find((key) => !KNOWN.has(key));
  if (unknown !== undefined) throw invalid(unknown);
  const { policy, auditLog, auditDecisions, auditTimeoutMs, dataSourceName } = options as Partial<RuntimePolicyModuleOptions>;
  if (auditLog !== undefined && auditLog !== 'postgres' && !(typeof auditLog === 'object' && auditLog !== null && typeof auditLog.record === 'function')) {
    throw invalid('auditLog');
  }
  if (auditDecisions !== undefined && auditDecisions !== 'deny' && auditDecisions !== 'all') throw invalid('auditDecisions');
  if (auditTimeoutMs !== undefined && !(isSafeIntegerAtLeast(auditTimeoutMs, 1) && auditTimeoutMs <= 60_000)) throw invalid('auditTimeoutMs');
  if (dataSourceName !== undefined && (typeof dataSourceName !== 'string' || dataSourceName.length === 0)) throw invalid('dataSourceName');
  if (policy === undefined) throw invalid('policy');
  return Object.freeze({
    policy: compiled(policy),
    auditLog,
    auditDecisions: auditDecisions ?? 'deny',
    auditTimeoutMs: auditTimeoutMs ?? 5000,
    dataSourceName,
  });
}

function compiled(policy: unknown): RuntimePolicy {
  if (RuntimePolicy.isRuntimePolicy(policy)) return policy;
  // a look-alike (or a detached prototype) describes itself as invalid: refuse it rather than compile it
  if (typeof policy === 'object' && policy !== null && policy instanceof RuntimePolicy) throw invalid('policy');
  return RuntimePolicy.compile(policy as never);
}

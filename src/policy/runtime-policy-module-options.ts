import { conflictingDataSourceFields, isDataSource } from '../database/app-data-source';
import type { DataSource } from 'typeorm';
import { optionFailureDetails, readOptions, type OptionRules } from '../shared/options/option-reader';
import { integerIn, isNonEmptyString, oneOf } from '../shared/options/option-rules';
import { RuntimePolicy } from './runtime-policy';
import type { RuntimePolicyModuleOptions } from './runtime-policy.constants';
import { RuntimePolicyError } from './runtime-policy.errors';

const isAuditSinkOption = (value: unknown): boolean =>
  value === 'postgres' || (typeof value === 'object' && value !== null && typeof (value as { record?: unknown }).record === 'function');

/** The rules of spec 02 §8; `policy` is required and compiled after the other options pass. */
const MODULE_OPTION_RULES: OptionRules<keyof RuntimePolicyModuleOptions> = {
  policy: () => true,
  auditLog: isAuditSinkOption,
  auditDecisions: oneOf('deny', 'all'),
  auditTimeoutMs: integerIn(1, 60_000),
  dataSource: isDataSource,
  dataSourceName: isNonEmptyString,
};

const invalid = (fields: readonly string[]) => new RuntimePolicyError('invalid_runtime_policy_module_options', optionFailureDetails(fields));

/** Validated module options with defaults; `policy` is always a compiled, valid policy. */
export interface ResolvedRuntimePolicyModuleOptions {
  readonly policy: RuntimePolicy;
  readonly auditLog: RuntimePolicyModuleOptions['auditLog'];
  readonly auditDecisions: 'deny' | 'all';
  readonly auditTimeoutMs: number;
  readonly dataSource: DataSource | undefined;
  readonly dataSourceName: string | undefined;
}

/**
 * Validates the module options (unknown keys and bad values → `invalid_runtime_policy_module_options`
 * with `{field}` or sorted `{fields}`) and compiles a policy spec; a compile error propagates as is.
 */
export function resolveRuntimePolicyModuleOptions(options: unknown): ResolvedRuntimePolicyModuleOptions {
  const read = readOptions(options ?? null, MODULE_OPTION_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw invalid(read.fields);
  const { policy, auditLog, auditDecisions, auditTimeoutMs, dataSource, dataSourceName } = read.values as Partial<RuntimePolicyModuleOptions>;
  if (policy === undefined) throw invalid(['policy']);
  const conflict = conflictingDataSourceFields({ dataSource, dataSourceName });
  if (conflict.length > 0) throw invalid(conflict);
  return Object.freeze({
    policy: compiled(policy),
    auditLog,
    auditDecisions: auditDecisions ?? 'deny',
    auditTimeoutMs: auditTimeoutMs ?? 5000,
    dataSource,
    dataSourceName,
  });
}

function compiled(policy: unknown): RuntimePolicy {
  if (RuntimePolicy.isRuntimePolicy(policy)) return policy;
  // a look-alike (or a detached prototype) describes itself as invalid: refuse it rather than compile it
  if (typeof policy === 'object' && policy !== null && policy instanceof RuntimePolicy) throw invalid(['policy']);
  return RuntimePolicy.compile(policy as never);
}

import type { AuditSink } from '../../policy/audit-log/audit-sink';
import { isValidSubject } from '../../policy/policy-name';
import { RuntimePolicy } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { RunnerError } from '../../runner/runner.errors';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { isFunction } from '../../shared/options/option-rules';
import { PolicyGuard } from './policy-guard';

/** Options of `guardTools` (and the base of the middleware's options). */
export interface GuardToolsOptions {
  /** A compiled `RuntimePolicy` (`RuntimePolicy.compile(spec)`); fail closed: what it does not allow is denied. */
  readonly policy: RuntimePolicy;
  /** Receives every deny decision before the model or the caller learns of it. @default none (decisions are not persisted) */
  readonly auditSink?: AuditSink;
  /** Called with every decision, allow and deny, as it is made; a throw is ignored. @default none */
  readonly onDecision?: (decision: PolicyDecision) => void;
}

/** Options of `runtimeSafetyMiddleware`. */
export interface RuntimeSafetyMiddlewareOptions extends GuardToolsOptions {
  /** The agent id checked against the policy's `agents` rules on every model call (1..256 UTF-8 bytes). */
  readonly agent: string;
}

const isCompiledPolicy = (value: unknown): boolean => RuntimePolicy.isRuntimePolicy(value) && !('status' in value.describe());
const isAuditSink = (value: unknown): boolean => typeof value === 'object' && value !== null && typeof (value as { record?: unknown }).record === 'function';

const GUARD_RULES = { policy: isCompiledPolicy, auditSink: isAuditSink, onDecision: isFunction };
const MIDDLEWARE_RULES = { ...GUARD_RULES, agent: isValidSubject };

/** Validated options: the guard, and the agent id for the middleware. */
export interface ResolvedGuardOptions {
  readonly guard: PolicyGuard;
  readonly agent: string;
}

/** Validates `guardTools` options; every problem is a `RunnerError`. */
export function resolveGuardToolsOptions(options: unknown): PolicyGuard {
  return resolve(options, GUARD_RULES).guard;
}

/** Validates `runtimeSafetyMiddleware` options; every problem is a `RunnerError`. */
export function resolveMiddlewareOptions(options: unknown): ResolvedGuardOptions {
  const resolved = resolve(options, MIDDLEWARE_RULES);
  if (resolved.agent === undefined) throw new RunnerError('invalid_runner_options', { field: 'agent' });
  return resolved as ResolvedGuardOptions;
}

/**
 * Own data properties only, unknown keys refused. A missing or unusable policy is
 * `invalid_runner_runtime_policy` (as the Runner reports it), anything else `invalid_runner_options`.
 */
function resolve<K extends string>(options: unknown, rules: OptionRules<K>): { guard: PolicyGuard; agent: string | undefined } {
  const read = readOptions(options, rules, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok && read.fields.includes('policy')) throw new RunnerError('invalid_runner_runtime_policy', { reason: 'invalid_runtime_policy' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  const values = read.values as { policy?: RuntimePolicy; auditSink?: AuditSink; onDecision?: (decision: PolicyDecision) => void; agent?: string };
  if (values.policy === undefined) throw new RunnerError('invalid_runner_runtime_policy', { reason: 'invalid_runtime_policy' });
  return { guard: new PolicyGuard(values.policy, values.auditSink ?? null, values.onDecision ?? null), agent: values.agent };
}

import { types } from 'node:util';
import type { AuditSink } from '../../policy/audit-log/audit-sink';
import type { RuntimePolicy } from '../../policy/runtime-policy';
import type { RuntimePolicySpec } from '../../policy/runtime-policy-compiler';
import { RunnerError } from '../../runner/runner.errors';
import { hasMethods, resolvePolicy } from '../../runner/runner-options';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import type { BasePlugin } from './adk.types';
import { AdkPolicyGuard } from './adk-policy-guard';

/**
 * The policy a guard part enforces when used on its own (an `AdkRunnerFacade` passes its own).
 *
 * @example
 * const options: AdkGuardOptions = { runtimePolicy: { agents: { allow: ['billing'] } }, auditSink: new PostgresAuditLog(dataSource) };
 */
export interface AdkGuardOptions {
  /** A compiled policy (refused when `describe()` reports it invalid) or a spec compiled here. */
  readonly runtimePolicy: RuntimePolicy | RuntimePolicySpec;
  /** Receives every deny decision after its session write. @default none */
  readonly auditSink?: AuditSink;
}

export const isObject = (value: unknown): boolean => typeof value === 'object' && value !== null;

const GUARD_RULES = { runtimePolicy: isObject, auditSink: hasMethods(['record']) };

/**
 * Validates the options of a guard part used on its own (`invalid_runner_options {field}`,
 * `invalid_runner_runtime_policy {reason}`); `extra` names the part's own keys and their rules.
 */
export function resolveGuardOptions<K extends string>(
  options: unknown,
  extra: { readonly [P in K]: (value: unknown) => boolean },
): { readonly guard: AdkPolicyGuard; readonly values: { readonly [P in K]?: unknown } } {
  const read = readOptions(options, { ...GUARD_RULES, ...extra } as Record<K | keyof typeof GUARD_RULES, (value: unknown) => boolean>, {
    name: 'options',
    unknownKeys: 'refuse',
  });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  if (read.values.runtimePolicy === undefined) throw new RunnerError('invalid_runner_options', { field: 'runtimePolicy' });
  const guard = new AdkPolicyGuard(resolvePolicy(read.values.runtimePolicy), (read.values.auditSink as AuditSink | undefined) ?? null);
  return { guard, values: read.values };
}

/** What a facade hands the parts it builds, so they share one guard and one side table. */
export interface SharedParts {
  readonly guard: AdkPolicyGuard;
  readonly plugins: readonly BasePlugin[];
}

const SHARED = Symbol('nest-agent-runtime.adk.shared');

/** Options that carry the facade's already validated parts (a key no caller can write). */
export function sharedOptions<T>(parts: SharedParts): T {
  return { [SHARED]: parts } as T;
}

/** The facade's parts inside `options`, read without running a getter. */
export function sharedPartsOf(options: unknown): SharedParts | undefined {
  if (typeof options !== 'object' || options === null || types.isProxy(options)) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(options, SHARED);
  return descriptor !== undefined && 'value' in descriptor ? (descriptor.value as SharedParts) : undefined;
}

import type { BaseArtifactService, BaseCredentialService, BaseMemoryService } from '@google/adk' with { 'resolution-mode': 'import' };
import type { AuditSink } from '../../policy/audit-log/audit-sink';
import type { RuntimePolicy } from '../../policy/runtime-policy';
import type { RuntimePolicySpec } from '../../policy/runtime-policy-compiler';
import { RunnerError } from '../../runner/runner.errors';
import { hasMethods, resolveAdmission, resolvePolicy, type ResolvedAdmission } from '../../runner/runner-options';
import type { RunnerAdmissionOptions, RunnerLogger } from '../../runner/runner.types';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import type { BaseAgent, BasePlugin, BaseSessionService } from './adk.types';
import { isObject } from './adk-guard-options';
import type { AdkModule } from './adk-peer';
import { readPlugins } from './adk-plugin-chain';

/**
 * Options of `new AdkRunnerFacade(...)`.
 *
 * @example
 * const options: AdkRunnerFacadeOptions = { appName: 'weather', agent, sessionService: new InMemorySessionService(), runtimePolicy: policy };
 */
export interface AdkRunnerFacadeOptions {
  /** ADK's app name, 1..128 characters. */
  readonly appName: string;
  /** The root ADK agent; its name is the admission agent id and the policy agent subject. */
  readonly agent: BaseAgent;
  /** The application's ADK session service; the facade wraps it in a `BudgetGuardSessionService`. */
  readonly sessionService: BaseSessionService;
  /** The application's ADK plugins, run inside the `AdkSafetyPlugin` in this order; unique names. @default [] */
  readonly plugins?: readonly BasePlugin[];
  /** Admission for every run, as the Runner's (`{controller, overflow?, queueTimeoutMs?}`). @default disabled */
  readonly admission?: RunnerAdmissionOptions;
  /** A compiled policy or a spec compiled here; once set every check is mandatory. @default disabled */
  readonly runtimePolicy?: RuntimePolicy | RuntimePolicySpec;
  /** Receives every deny decision (after its session write, when there is a session to write). @default none */
  readonly auditSink?: AuditSink;
  /** Passed to ADK's `Runner`. @default none */
  readonly artifactService?: BaseArtifactService;
  /** Passed to ADK's `Runner`. @default none */
  readonly memoryService?: BaseMemoryService;
  /** Passed to ADK's `Runner`. @default none */
  readonly credentialService?: BaseCredentialService;
  /** Where an ignored failure (a throwing admission release) is reported, without content. @default none */
  readonly logger?: RunnerLogger;
}

/** Facade options after validation. */
export interface ResolvedFacadeOptions {
  readonly appName: string;
  readonly agent: BaseAgent;
  readonly sessionService: BaseSessionService;
  readonly plugins: readonly BasePlugin[];
  readonly admission: ResolvedAdmission | null;
  readonly policy: RuntimePolicy | null;
  readonly auditSink: AuditSink | null;
  readonly artifactService: BaseArtifactService | undefined;
  readonly memoryService: BaseMemoryService | undefined;
  readonly credentialService: BaseCredentialService | undefined;
  readonly logger: RunnerLogger | null;
}

const SESSION_METHODS = ['createSession', 'getSession', 'listSessions', 'deleteSession', 'appendEvent'];

const RULES = {
  appName: (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= 128,
  agent: isObject,
  sessionService: hasMethods(SESSION_METHODS),
  plugins: (value: unknown) => readPlugins(value) !== null,
  admission: isObject,
  runtimePolicy: isObject,
  auditSink: hasMethods(['record']),
  artifactService: isObject,
  memoryService: isObject,
  credentialService: isObject,
  logger: hasMethods(['warn']),
};

/**
 * Validates `new AdkRunnerFacade(options)` with the Runner's codes: `invalid_runner_options {field}`,
 * `invalid_runner_admission_control {field}`, `invalid_runner_runtime_policy {reason}`.
 */
export function resolveFacadeOptions(adk: AdkModule, options: unknown): ResolvedFacadeOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  const values = read.values;
  for (const required of ['appName', 'agent', 'sessionService'] as const) {
    if (values[required] === undefined) throw new RunnerError('invalid_runner_options', { field: required });
  }
  if (!adk.isBaseAgent(values.agent)) throw new RunnerError('invalid_runner_options', { field: 'agent' });
  return Object.freeze({
    appName: values.appName as string,
    agent: values.agent as BaseAgent,
    sessionService: values.sessionService as BaseSessionService,
    plugins: readPlugins(values.plugins ?? []) as readonly BasePlugin[],
    admission: values.admission === undefined ? null : resolveAdmission(values.admission),
    policy: values.runtimePolicy === undefined ? null : resolvePolicy(values.runtimePolicy),
    auditSink: (values.auditSink as AuditSink | undefined) ?? null,
    artifactService: values.artifactService as BaseArtifactService | undefined,
    memoryService: values.memoryService as BaseMemoryService | undefined,
    credentialService: values.credentialService as BaseCredentialService | undefined,
    logger: (values.logger as RunnerLogger | undefined) ?? null,
  });
}

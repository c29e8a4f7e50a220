import type { OverflowMode } from '../admission/admission-config';
import type { InvocationLedger } from '../ledger/invocation-ledger';
import type { AuditSink } from '../policy/audit-log/audit-sink';
import { RuntimePolicy, type RuntimePolicyDeps } from '../policy/runtime-policy';
import type { RuntimePolicySpec } from '../policy/runtime-policy-compiler';
import { RuntimePolicyError } from '../policy/runtime-policy.errors';
import { systemClock, type Clock } from '../shared/time/clock';
import { optionFailureDetails, readOptions } from '../shared/options/option-reader';
import { integerIn, oneOf } from '../shared/options/option-rules';
import type { TelemetrySink } from '../telemetry/telemetry-sink';
import { isTraceStoreBinding, TraceProducer, type TraceStoreBinding } from '../trace/trace-producer';
import type { RunnerPlugin } from './agent.types';
import { compileAgentTree, type CompiledAgent } from './loop/agent-tree';
import { RunnerError } from './runner.errors';
import type { PermitSource } from '../admission/admission-service';
import type { RunnerAdmissionOptions, RunnerLogger } from './runner.types';
import { isValidId } from '../shared/ids/id-rule';
import { isPriorityClass, isRequestCost } from '../admission/admission-request';
import { isTimeoutMs } from '../admission/admission-config';
import type { SessionService } from './session.types';
import type { ArtifactService, MemoryService } from './tools/tool-services.types';
import { defaultRunTracer } from './tracing/otel/default-run-tracer';
import { NO_RUN_TRACER, type RunTracer } from './tracing/run-tracer';

/** Admission after validation: an absent value means the controller's default. */
export interface ResolvedAdmission {
  readonly controller: PermitSource;
  readonly overflow: OverflowMode | undefined;
  readonly queueTimeoutMs: number | 'infinity' | undefined;
  readonly tenant: RunnerAdmissionOptions['tenant'];
  readonly cost: RunnerAdmissionOptions['cost'];
  readonly priority: RunnerAdmissionOptions['priority'];
}

/** Runner options after validation (spec 03 §5). */
export interface ResolvedRunnerOptions {
  readonly appName: string;
  readonly root: CompiledAgent;
  readonly sessionService: SessionService;
  readonly plugins: readonly RunnerPlugin[];
  readonly artifactService: ArtifactService | null;
  readonly memoryService: MemoryService | null;
  readonly admission: ResolvedAdmission | null;
  readonly policy: RuntimePolicy | null;
  readonly auditSink: AuditSink | null;
  readonly ledger: InvocationLedger | null;
  readonly runTimeoutMs: number | null;
  readonly maxModelCalls: number;
  readonly clock: Clock;
  readonly events: TelemetrySink | null;
  readonly logger: RunnerLogger | null;
  /** The Runner's side of its trace store (a producer without a store delivers nowhere). */
  readonly trace: TraceProducer;
  /** Starts the spans of each invocation (the no-op tracer when tracing is off). */
  readonly tracing: RunTracer;
}

const DEFAULT_MAX_MODEL_CALLS = 32;
const SESSION_METHODS = ['createSession', 'getSession', 'listSessions', 'deleteSession', 'appendEvent', 'listEvents', 'updateState'] as const;
const PLUGIN_HOOKS = [
  'onUserMessageCallback',
  'beforeRunCallback',
  'beforeToolCallback',
  'afterToolCallback',
  'onToolErrorCallback',
  'onEventCallback',
  'afterRunCallback',
  'onRunErrorCallback',
] as const;

/** An option rule: an object with these methods (the shape check of collaborators such as a session service). */
export const hasMethods = (methods: readonly string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null && methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

const RULES = {
  appName: (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= 128,
  agent: (value: unknown) => typeof value === 'object' && value !== null,
  sessionService: hasMethods(SESSION_METHODS),
  plugins: Array.isArray,
  admission: (value: unknown) => typeof value === 'object' && value !== null,
  runtimePolicy: (value: unknown) => typeof value === 'object' && value !== null,
  auditSink: hasMethods(['record']),
  ledger: hasMethods(['createAndClaim', 'claim', 'renew', 'checkpoint', 'finish', 'get']),
  runTimeoutMs: integerIn(1),
  maxModelCalls: integerIn(1),
  clock: hasMethods(['monotonicNow', 'wallNow', 'setTimer', 'clearTimer']),
  events: hasMethods(['emit']),
  logger: hasMethods(['warn']),
  traceStore: isTraceStoreBinding,
  tracing: (value: unknown) => value === null || hasMethods(['startRun'])(value),
  artifactService: hasMethods(['saveArtifact', 'loadArtifact', 'listArtifactKeys', 'listVersions', 'deleteArtifact']),
  memoryService: hasMethods(['addSessionToMemory', 'addEvents', 'searchMemory', 'eraseMemory']),
};

const ADMISSION_RULES = {
  controller: hasMethods(['acquire', 'release']),
  overflow: oneOf('reject', 'queue'),
  queueTimeoutMs: isTimeoutMs,
  tenant: (value: unknown) => typeof value === 'function' || isValidId(value),
  cost: (value: unknown) => typeof value === 'function' || isRequestCost(value),
  priority: (value: unknown) => typeof value === 'function' || isPriorityClass(value),
};

/** Validates `new Runner(options)` synchronously; every problem is a `RunnerError`. */
export function resolveRunnerOptions(options: unknown): ResolvedRunnerOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  const values = read.values;
  for (const required of ['appName', 'agent', 'sessionService'] as const) {
    if (values[required] === undefined) throw new RunnerError('invalid_runner_options', { field: required });
  }
  return Object.freeze({
    appName: values.appName as string,
    root: compileAgentTree(values.agent),
    sessionService: values.sessionService as SessionService,
    plugins: resolvePlugins(values.plugins as unknown[] | undefined),
    admission: values.admission === undefined ? null : resolveAdmission(values.admission),
    policy: values.runtimePolicy === undefined ? null : resolvePolicy(values.runtimePolicy, { clock: values.clock as Clock | undefined, events: values.events as TelemetrySink | undefined }),
    auditSink: (values.auditSink as AuditSink | undefined) ?? null,
    ledger: (values.ledger as InvocationLedger | undefined) ?? null,
    runTimeoutMs: (values.runTimeoutMs as number | undefined) ?? null,
    maxModelCalls: (values.maxModelCalls as number | undefined) ?? DEFAULT_MAX_MODEL_CALLS,
    clock: (values.clock as Clock | undefined) ?? systemClock,
    events: (values.events as TelemetrySink | undefined) ?? null,
    logger: (values.logger as RunnerLogger | undefined) ?? null,
    trace: new TraceProducer((values.traceStore as TraceStoreBinding | undefined) ?? null),
    tracing: values.tracing === null ? NO_RUN_TRACER : ((values.tracing as RunTracer | undefined) ?? defaultRunTracer()),
    artifactService: (values.artifactService as ArtifactService | undefined) ?? null,
    memoryService: (values.memoryService as MemoryService | undefined) ?? null,
  });
}

function resolvePlugins(plugins: unknown[] | undefined): readonly RunnerPlugin[] {
  const names = new Set<string>();
  for (const plugin of plugins ?? []) {
    const candidate = plugin as RunnerPlugin | null;
    if (typeof candidate !== 'object' || candidate === null || typeof candidate.name !== 'string' || candidate.name.length === 0 || names.has(candidate.name)) {
      throw new RunnerError('invalid_runner_options', { field: 'plugins' });
    }
    for (const hook of PLUGIN_HOOKS) {
      if (candidate[hook] !== undefined && typeof candidate[hook] !== 'function') throw new RunnerError('invalid_runner_options', { field: 'plugins' });
    }
    names.add(candidate.name);
  }
  return Object.freeze([...((plugins ?? []) as RunnerPlugin[])]);
}

/** Validates the `admission` option (`invalid_runner_admission_control {field}`); the ADK facade shares it. */
export function resolveAdmission(admission: unknown): ResolvedAdmission {
  const read = readOptions(admission, ADMISSION_RULES, { name: 'admission', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_admission_control', optionFailureDetails(read.fields));
  if (read.values.controller === undefined) throw new RunnerError('invalid_runner_admission_control', { field: 'controller' });
  const timeout = read.values.queueTimeoutMs;
  return Object.freeze({
    controller: read.values.controller as PermitSource,
    overflow: read.values.overflow as OverflowMode | undefined,
    queueTimeoutMs: timeout === Infinity ? 'infinity' : (timeout as number | 'infinity' | undefined),
    tenant: read.values.tenant as ResolvedAdmission['tenant'],
    cost: read.values.cost as ResolvedAdmission['cost'],
    priority: read.values.priority as ResolvedAdmission['priority'],
  });
}

/** A compiled policy keeps its own deps; a spec is compiled with the given clock and telemetry sink (`invalid_runner_runtime_policy {reason}`). */
export function resolvePolicy(policy: unknown, deps: RuntimePolicyDeps = {}): RuntimePolicy {
  if (RuntimePolicy.isRuntimePolicy(policy)) {
    if ('status' in policy.describe()) throw new RunnerError('invalid_runner_runtime_policy', { reason: 'invalid_runtime_policy' });
    return policy;
  }
  try {
    return RuntimePolicy.compile(policy as RuntimePolicySpec, deps);
  } catch (error) {
    const reason = RuntimePolicyError.isAgentRuntimeError(error, RuntimePolicyError) ? error.code : 'invalid_runtime_policy';
    throw new RunnerError('invalid_runner_runtime_policy', { reason });
  }
}

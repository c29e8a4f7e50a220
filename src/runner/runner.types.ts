import type { OverflowMode } from '../admission/admission-config';
import type { PermitSource } from '../admission/admission-service';
import type { PriorityClass } from '../admission/flow/fair-share';
import type { InvocationLedger } from '../ledger/invocation-ledger';
import type { AuditSink } from '../policy/audit-log/audit-sink';
import type { RuntimePolicy } from '../policy/runtime-policy';
import type { RuntimePolicySpec } from '../policy/runtime-policy-compiler';
import type { Clock } from '../shared/time/clock';
import type { TelemetrySink } from '../telemetry/telemetry-sink';
import type { TraceStoreBinding } from '../trace/trace-producer';
import type { Agent, RunnerPlugin } from './agent.types';
import type { Content, JsonValue, Message } from './content.types';
import type { SessionEvent, SessionService } from './session.types';
import type { ArtifactService, MemoryService } from './tools/tool-services.types';
import type { RunTracer } from './tracing/run-tracer';

/** Admission for every invocation (spec 03 §5). */
export interface RunnerAdmissionOptions {
  /** Any controller: `AdmissionController`, `ClusterAdmissionController`, or an object with their `acquire` and `release`. */
  readonly controller: PermitSource;
  /** @default the controller's */
  readonly overflow?: OverflowMode;
  /** Integer ≥ 0, `'infinity'` or `Infinity`. @default the controller's */
  readonly queueTimeoutMs?: number | 'infinity';
  /**
   * The tenant each invocation is admitted for (spec 09 §1): a valid id, or a resolver of the run
   * (for example `(run) => run.userId`). @default none (no tenant scope)
   */
  readonly tenant?: string | ((run: AdmissionRunContext) => string);
  /** Estimated units each invocation will use (finite, 0..2^31), or a resolver of the run. @default 1 */
  readonly cost?: number | ((run: AdmissionRunContext) => number);
  /** The queue class of each invocation, or a resolver of the run. @default 'normal' */
  readonly priority?: PriorityClass | ((run: AdmissionRunContext) => PriorityClass);
}

/** What the admission resolvers of the Runner see of an invocation (identifiers only, never content). */
export interface AdmissionRunContext {
  /** The root agent's name, the admission agent id. */
  readonly agent: string;
  readonly userId: string;
  readonly sessionId: string;
}

/** Options of `new Runner(...)` (spec 03 §5). */
export interface RunnerOptions {
  /** 1..128 characters. */
  readonly appName: string;
  /** The root agent. */
  readonly agent: Agent;
  readonly sessionService: SessionService;
  /** Global plugins, unique names, run in this order. @default [] */
  readonly plugins?: readonly RunnerPlugin[];
  /** @default disabled */
  readonly admission?: RunnerAdmissionOptions;
  /** A compiled policy or a spec compiled here; once set every check is mandatory. @default disabled */
  readonly runtimePolicy?: RuntimePolicy | RuntimePolicySpec;
  /** Receives every deny decision after the session write. @default none */
  readonly auditSink?: AuditSink;
  /** Durable invocations (`durable: true`) are recorded in it. @default none */
  readonly ledger?: InvocationLedger;
  /** The whole invocation, queue wait included; positive integer. @default none */
  readonly runTimeoutMs?: number;
  /** Model calls per invocation. @default 32 */
  readonly maxModelCalls?: number;
  /** @default the system clock */
  readonly clock?: Clock;
  /**
   * Receives `agent_runtime.runner.invocation` of every invocation; `EventEmitter2` fits. It wins over
   * a run request's `events`, which is how runs started through `RunsModule` reach the app's
   * `EventEmitter2` without this option.
   * @default the run request's `events`; none for a direct `run` without it
   */
  readonly events?: TelemetrySink;
  /** Observability events of every invocation go to this store under `principal` (spec 03 §8). @default none */
  readonly traceStore?: TraceStoreBinding;
  /** Where ignored failures (a throwing `afterRunCallback`, release or toolset close) are reported, without content. @default none */
  readonly logger?: RunnerLogger;
  /**
   * Spans of every invocation: a {@link RunTracer}, the interface the Runner calls at its observability
   * points. `openTelemetryTracing({tracerProvider?})` (observability module) builds the OpenTelemetry
   * one: content-free `invoke_agent`, `chat` and `execute_tool` spans; another tracer plugs in the same
   * way. `null` turns spans off.
   * @default OpenTelemetry's global tracer when `@opentelemetry/api` is installed (spans reach the app's
   * OpenTelemetry SDK, and cost next to nothing without one); no spans otherwise
   */
  readonly tracing?: RunTracer | null;
  /** Gives tools `ctx.artifacts`, scoped to the invocation's app, user and session (spec 03 §13). @default none */
  readonly artifactService?: ArtifactService;
  /** Gives tools `ctx.memory`, scoped to the invocation's app and user (spec 03 §13). @default none */
  readonly memoryService?: MemoryService;
}

/** A sink for the Runner's content-free warnings; Nest's `Logger` fits. */
export interface RunnerLogger {
  warn(message: string): void;
}

/** One invocation (`runAsync`/`run`). */
export interface RunRequest {
  readonly userId: string;
  /** `^[A-Za-z0-9._:-]{1,128}$`; generated when absent; the session is created after admission when missing. */
  readonly sessionId?: string;
  readonly message: Message;
  /** Record the invocation in the ledger (needs the `ledger` option). @default false */
  readonly durable?: boolean;
  /** Aborting it cancels the invocation; a string `reason` (1..128 characters) is reported as the cancel reason. */
  readonly signal?: AbortSignal;
  /** The run this invocation belongs to (metadata of trace events). */
  readonly runId?: string;
  /** Called once admission granted, with the invocation id. */
  readonly onAdmitted?: (info: { readonly invocation_id: string }) => void;
  /**
   * Receives this invocation's `agent_runtime.runner.invocation` when the Runner has no `events`
   * option (the Runner's own sink wins). `RunRegistry` passes its `events` here, which `RunsModule`
   * sets to the app's `EventEmitter2`. @default the Runner's `events`
   */
  readonly events?: TelemetrySink;
}

/**
 * Continues a paused or interrupted invocation (spec 03 §7–§8). With `callId` it answers a pending
 * confirmation (`confirmed` required); without it it continues a durable invocation from its ledger
 * checkpoint (crash recovery).
 */
export interface ResumeRequest {
  readonly userId: string;
  readonly sessionId: string;
  readonly invocationId: string;
  readonly callId?: string;
  readonly confirmed?: boolean;
  readonly payload?: JsonValue;
  /**
   * The principal id of whoever answered the confirmation (an identifier, never content; `callId`
   * required): stored as `confirmed_by` on the answered call's `tool_response` event and as
   * `approved_by` on the policy decision of its re-check. `RunRegistry.confirm` passes it.
   */
  readonly confirmedBy?: string;
  readonly signal?: AbortSignal;
  readonly runId?: string;
  readonly onAdmitted?: (info: { readonly invocation_id: string }) => void;
  /** As `RunRequest.events`. @default the Runner's `events` */
  readonly events?: TelemetrySink;
}

/** How an invocation ended without an error. */
export interface RunResult {
  readonly status: 'completed' | 'paused';
  readonly invocation_id: string;
  readonly session_id: string;
  /** The final output of a completed run. */
  readonly output?: Content;
  /** The calls awaiting confirmation of a paused run. */
  readonly pending_call_ids?: readonly string[];
}

/** The generator `runAsync` and `resumeAsync` return: stored events, then the result. */
export type RunStream = AsyncGenerator<SessionEvent, RunResult, undefined>;

import { untilAborted } from '../../shared/async/abortable';
import { randomId } from '../../shared/ids/random-id';
import { logField } from '../../shared/text/log-escape';
import { isValidId } from '../../shared/ids/id-rule';
import type { ReadonlyContext, ToolContext, ConfirmationDecision } from '../agent.types';
import { toolArtifacts, toolMemory } from '../tools/tool-services';
import type { JsonObject } from '../content.types';
import { EventChannel } from '../loop/event-channel';
import type { ResolvedRunnerOptions } from '../runner-options';
import { RunnerError } from '../runner.errors';
import type { RunResult } from '../runner.types';
import type { SessionEvent, SessionRef } from '../session.types';
import type { Toolset } from '../agent.types';
import { visibleState } from '../durable/continuations';
import type { DurableRecord } from '../durable/durable-record';
import type { RunSpans } from '../tracing/run-tracer';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { ModelCallReports } from '../../admission/model-call-reports';

/** Why an invocation was ended from outside its own flow. */
export type InvocationEnd =
  | { readonly code: 'cancelled'; readonly reason: string; readonly handover?: true }
  | { readonly code: 'timeout'; readonly timeoutMs: number }
  | { readonly code: 'invocation_fence_lost' };

/**
 * The abort reason that hands a durable invocation over instead of ending it: aborting the caller's
 * signal with this symbol stops the invocation (cancel reason `'handover'`) without recording an
 * end, so its ledger row stays `running` with its checkpoint, for a resume on another instance once
 * this one's lease or instance lock is gone (a cluster instance shutting down, spec 08 §4). A symbol,
 * so no cancel reason a client sends can stand for it.
 */
export const HANDOVER_REASON: unique symbol = Symbol('agent_runtime.handover');

/** The cancel reason a caller's `signal.reason` carries, when it is a short printable string. */
export function cancelReasonOf(reason: unknown): string {
  return typeof reason === 'string' && reason.length <= 128 && isValidId(reason) ? reason : 'aborted';
}

/** The error an ended invocation reports. */
export function endError(end: InvocationEnd): RunnerError {
  if (end.code === 'cancelled') return new RunnerError('cancelled', { reason: end.reason });
  if (end.code === 'timeout') return new RunnerError('timeout', { timeout_ms: end.timeoutMs });
  return new RunnerError('invocation_fence_lost', {});
}

/** Where an invocation awaits code it was given (a hook name, or the service or object called). */
export type UserCodeSite = string;

/**
 * One invocation's state (spec 03 §6): its id, the invocation controller every wait is bound to,
 * the session it writes, its counters, and the channel its stored events go out on.
 */
export class InvocationScope {
  readonly invocationId: string;
  readonly controller = new AbortController();
  readonly channel = new EventChannel<SessionEvent, RunResult>();
  readonly materialized = new Set<Toolset>();
  /** Reports the model calls' outcome on the invocation's permit (spec 09 §6). */
  readonly modelReports = new ModelCallReports();
  readonly startedAt: number;
  /** The invocation's OpenTelemetry spans (no-ops without tracing). */
  readonly spans: RunSpans;
  /** Where `agent_runtime.runner.invocation` goes: the Runner's `events`, else the request's, else nowhere. */
  readonly events: TelemetrySink | null;
  ref: SessionRef;
  state: JsonObject = Object.freeze({});
  end: InvocationEnd | null = null;
  durable: DurableRecord | null = null;
  modelCalls = 0;
  toolCalls = 0;
  policyDenials = 0;
  #lateResults = 0;

  constructor(
    readonly options: ResolvedRunnerOptions,
    readonly userId: string,
    sessionId: string,
    invocationId: string = randomId('inv-'),
    /** The run this invocation belongs to, as trace metadata. */
    readonly runId?: string,
    /** The request's telemetry sink (used when the Runner has none). */
    requestEvents?: TelemetrySink,
  ) {
    this.events = options.events ?? requestEvents ?? null;
    this.invocationId = invocationId;
    this.ref = Object.freeze({ appName: options.appName, userId, sessionId });
    this.startedAt = options.clock.monotonicNow();
    this.spans = options.tracing.startRun(options.root.name, invocationId, runId);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once the invocation was ended by a handover ({@link HANDOVER_REASON}). */
  get handedOver(): boolean {
    return this.end?.code === 'cancelled' && this.end.handover === true;
  }

  /** Ends the invocation from outside (first reason wins); every wait bound to the signal stops. */
  abort(end: InvocationEnd): void {
    if (this.end !== null || this.signal.aborted) return;
    this.end = end;
    this.controller.abort(end.code);
  }

  /** Throws the end error once the invocation was ended: nothing more is written after that. */
  throwIfEnded(): void {
    if (this.end !== null) throw endError(this.end);
  }

  /** A failure seen after the invocation ended is reported as the end, not as itself. */
  failureOf(error: unknown): unknown {
    return this.end !== null ? endError(this.end) : error;
  }

  /** Logs the first late result of abandoned user code, as a code, a site and counts. */
  #lateResult(site: UserCodeSite, outcome: 'resolved' | 'rejected', started: number): void {
    this.#lateResults += 1;
    if (this.#lateResults > 1) return;
    const waitedMs = Math.round(this.options.clock.monotonicNow() - started);
    try {
      this.options.logger?.warn(
        `Runner: user_code_late_result discarded for agent=${logField(this.options.root.name)} site=${site} outcome=${outcome} waited_ms=${waitedMs} (later ones not logged)`,
      );
    } catch {
      // a failing logger changes nothing about an invocation that already ended
    }
  }

  /** Remembers the session state callbacks see (the reserved continuation key removed). */
  useState(state: JsonObject): void {
    this.state = visibleState(state);
  }

  context(agentName: string): ReadonlyContext {
    const { appName, userId, sessionId } = this.ref;
    return Object.freeze({ appName, userId, sessionId, invocationId: this.invocationId, agentName, state: this.state });
  }

  toolContext(agentName: string, callId: string, confirmation: ConfirmationDecision | undefined): ToolContext {
    const base = { ...this.context(agentName), callId, signal: this.signal, idempotencyKey: `${this.invocationId}:${callId}` };
    const { artifactService, memoryService } = this.options;
    return Object.freeze({
      ...base,
      ...(confirmation === undefined ? {} : { confirmation }),
      ...(artifactService === null ? {} : { artifacts: toolArtifacts(artifactService, this.ref, this.signal) }),
      ...(memoryService === null ? {} : { memory: toolMemory(memoryService, this.ref, this.signal) }),
    });
  }

  /**
   * Awaits code the invocation was given (a plugin, callback, toolset, session service, model, tool)
   * only until the invocation signal aborts: then it rejects with the end error at once, whether or
   * not `work` ever returns, and `work`'s late result is discarded (the first one logged, without
   * content). Nothing is started once the invocation ended.
   */
  userCode<T>(site: UserCodeSite, work: () => T | PromiseLike<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(this.end === null ? this.signal.reason : endError(this.end));
    const started = this.options.clock.monotonicNow();
    return untilAborted(Promise.resolve().then(work), this.signal, (outcome) => this.#lateResult(site, outcome, started)).catch((error: unknown) => {
      this.throwIfEnded();
      throw error;
    });
  }

  /** Calls the session service; its failures become `session_store_failed {operation}` unless typed. */
  async session<T>(operation: string, work: () => Promise<T>): Promise<T> {
    this.throwIfEnded();
    try {
      return await this.userCode(`session.${operation}`, work);
    } catch (error) {
      this.throwIfEnded();
      if (RunnerError.isRunnerError(error)) throw error;
      throw new RunnerError('session_store_failed', { operation });
    }
  }
}

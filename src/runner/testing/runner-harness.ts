import { randomBytes } from 'node:crypto';
import { AdmissionController } from '../../admission/admission-controller';
import type { AdmissionConfig } from '../../admission/admission-config';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { RuntimePolicy } from '../../policy/runtime-policy';
import type { RuntimePolicySpec } from '../../policy/runtime-policy-compiler';
import type { Agent, Tool, Toolset } from '../agent.types';
import type { JsonObject, JsonValue } from '../content.types';
import { SessionServiceDouble } from './session-service-double';
import type { ModelRequest } from '../models/model.types';
import { Runner } from '../runner';
import { RunnerError, type RunnerErrorCode } from '../runner.errors';
import type { RunnerOptions, RunResult, RunStream } from '../runner.types';
import { ScriptedModel, type ScriptedStep } from '../models/scripted-model';
import type { NewSessionEvent, SessionEvent, SessionRef } from '../session.types';

export const APP = 'runner-tests';
export const USER = 'user-1';
export const AGENT = 'assistant';

/** A random secret that must never leave the places that legitimately hold content. */
export function canary(): string {
  return `canary-${randomBytes(12).toString('hex')}`;
}

/** Everything observable that is not a stored session event: telemetry, audit sink, logger. */
export class Observers {
  readonly telemetry: Array<{ readonly event: string; readonly payload: unknown }> = [];
  readonly auditRecords: PolicyDecision[] = [];
  readonly logLines: string[] = [];
  readonly events = { emit: (event: string, payload: object) => void this.telemetry.push({ event, payload }) };
  readonly auditSink = { record: async (decision: PolicyDecision) => void this.auditRecords.push(decision) };
  readonly logger = { warn: (line: string) => void this.logLines.push(line) };

  /** A policy compiled from `spec` whose decisions reach this telemetry sink. */
  policy(spec: RuntimePolicySpec): RuntimePolicy {
    return RuntimePolicy.compile(spec, { events: this.events });
  }

  /** An admission controller whose decisions reach this telemetry sink. */
  admission(config: AdmissionConfig = {}): AdmissionController {
    return new AdmissionController(config, { events: this.events });
  }

  /** Telemetry, audit records and log lines as one text, for substring checks. */
  text(): string {
    return JSON.stringify({ telemetry: this.telemetry, audit: this.auditRecords, log: this.logLines });
  }

  policyDecisions(): Array<Record<string, unknown>> {
    return this.telemetry.filter((entry) => entry.event === 'agent_runtime.policy.decision').map((entry) => entry.payload as Record<string, unknown>);
  }
}

/** A session service that counts every call, to prove a path touched no session. */
export class CountingSessionService extends SessionServiceDouble {
  calls: string[] = [];

  override async createSession(input: Parameters<SessionServiceDouble['createSession']>[0]) {
    this.calls.push('createSession');
    return super.createSession(input);
  }
  override async getSession(ref: SessionRef) {
    this.calls.push('getSession');
    return super.getSession(ref);
  }
  override async appendEvent(ref: SessionRef, event: NewSessionEvent) {
    this.calls.push('appendEvent');
    return super.appendEvent(ref, event);
  }
  override async listEvents(ref: SessionRef, options?: Parameters<SessionServiceDouble['listEvents']>[1]) {
    this.calls.push('listEvents');
    return super.listEvents(ref, options);
  }
  override async updateState(ref: SessionRef, delta: { readonly [key: string]: JsonValue }, options?: Parameters<SessionServiceDouble['updateState']>[2]) {
    this.calls.push('updateState');
    return super.updateState(ref, delta, options);
  }
}

/** A root agent on a fresh ScriptedModel. */
export function scriptedAgent(steps: readonly ScriptedStep[], extra: Partial<Agent> = {}, name = AGENT): Agent & { readonly model: ScriptedModel } {
  return { name, model: new ScriptedModel(steps), ...extra } as Agent & { readonly model: ScriptedModel };
}

/** A tool that counts its executions and answers with `answer(args)`. */
export function countingTool(name: string, answer: (args: JsonObject, ctx: Parameters<Tool['execute']>[1]) => JsonValue | Promise<JsonValue> = () => ({ ok: true }), extra: Partial<Tool> = {}) {
  const executions: JsonObject[] = [];
  const tool: Tool = {
    name,
    ...extra,
    execute: (args, ctx) => {
      executions.push(args);
      return answer(args, ctx);
    },
  };
  return { tool, executions };
}

/** A toolset that lists `names`, counting preflights, materialisations and closes. */
export function countingToolset(name: string, names: readonly string[], build: (toolName: string) => Tool = (toolName) => ({ name: toolName, execute: () => ({ from: name }) })) {
  const counts = { listed: 0, materialized: 0, closed: 0 };
  const toolset: Toolset = {
    name,
    listToolNames: () => {
      counts.listed += 1;
      return names;
    },
    materialize: (toolName) => {
      counts.materialized += 1;
      return build(toolName);
    },
    close: () => {
      counts.closed += 1;
    },
  };
  return { toolset, counts };
}

/** A runner on a fresh `SessionServiceDouble` unless a session service is given. */
export function makeRunner(options: Partial<RunnerOptions> & { agent: Agent }): Runner {
  return new Runner({ appName: APP, sessionService: new SessionServiceDouble(), ...options } as RunnerOptions);
}

/** Drains a stream: the events it yielded, then its result or its error. */
export async function drain(stream: RunStream): Promise<{ streamed: SessionEvent[]; result?: RunResult; error?: unknown }> {
  const streamed: SessionEvent[] = [];
  try {
    for (;;) {
      const next = await stream.next();
      if (next.done === true) return { streamed, result: next.value };
      streamed.push(next.value);
    }
  } catch (error) {
    return { streamed, error };
  }
}

/** The RunnerError a promise rejects with; fails the test if it resolves or rejects with anything else. */
export async function runnerError(work: Promise<unknown>): Promise<RunnerError> {
  let outcome: unknown;
  try {
    outcome = await work;
  } catch (error) {
    if (!RunnerError.isRunnerError(error)) throw new Error(`expected a RunnerError, got ${String(error)}`);
    return error;
  }
  throw new Error(`expected a RunnerError, got a result: ${JSON.stringify(outcome)}`);
}

/** Asserts the error's code and details. */
export function expectError(error: unknown, code: RunnerErrorCode, details?: Record<string, unknown>): void {
  expect(RunnerError.isRunnerError(error)).toBe(true);
  expect((error as RunnerError).code).toBe(code);
  if (details !== undefined) expect((error as RunnerError).details).toEqual(details);
}

/** The stored events of a session (an empty list when the session does not exist). */
export async function storedEvents(runner: Runner, sessionId: string): Promise<readonly SessionEvent[]> {
  const ref = { appName: APP, userId: USER, sessionId };
  if ((await runner.sessionService.getSession(ref)) === undefined) return [];
  return runner.sessionService.listEvents(ref);
}

export function ofKind(events: readonly SessionEvent[], kind: SessionEvent['kind']): SessionEvent[] {
  return events.filter((event) => event.kind === kind);
}

/** The tool entries of a model request, by call id. */
export function toolResponses(request: ModelRequest): Map<string, JsonValue> {
  const responses = new Map<string, JsonValue>();
  for (const entry of request.contents) if (entry.role === 'tool') responses.set(entry.callId, entry.response);
  return responses;
}

/** The decision an audit event carries. */
export function decisionOf(event: SessionEvent): PolicyDecision {
  return (event.actions as unknown as { runtime_policy_decision: PolicyDecision }).runtime_policy_decision;
}

/** The model-visible denial record of a decision (spec 03 §6.11), built by hand. */
export function expectedDenialRecord(decision: PolicyDecision): JsonValue {
  const { decision_id, policy_id, operation, outcome, reason } = decision;
  return { success: false, error: { kind: 'runtime_policy_denied', decision_id, policy_id, operation, outcome, reason } };
}

/** An error as text, message, details and stack included. */
export function errorText(error: unknown): string {
  const err = error as { message?: string; details?: unknown; stack?: string; code?: string };
  return JSON.stringify({ message: err?.message, details: err?.details, stack: err?.stack, code: err?.code });
}

/** Resolves when `predicate` holds, polling the event loop. */
export async function until(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A model step that never answers until its signal aborts; `started` flips when it is called. */
export function hangingStep(flag: { started: boolean; signal?: AbortSignal }): ScriptedStep {
  return (_request, signal) => {
    flag.started = true;
    flag.signal = signal;
    return new Promise(() => undefined);
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

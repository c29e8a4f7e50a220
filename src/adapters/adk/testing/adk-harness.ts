import { randomBytes } from 'node:crypto';
import {
  BaseLlm,
  BasePlugin,
  FunctionTool,
  InMemorySessionService,
  LlmAgent,
  setLogger,
  type BaseLlmConnection,
  type LlmAgentConfig,
  type Event,
  type LlmRequest,
  type LlmResponse,
} from '@google/adk';
import type { PolicyDecision } from '../../../policy/runtime-policy.types';
import { RunnerError, type RunnerErrorCode } from '../../../runner/runner.errors';
import { AdkRunnerFacade } from '../adk-runner-facade';
import type { AdkRunnerFacadeOptions } from '../adk-facade-options';
import type { AdkContent } from '../adk.types';

// ADK logs every plugin registration and tool call; the suites read events, not logs
setLogger({ log() {}, debug() {}, info() {}, warn() {}, error() {}, setLogLevel() {} });

export const APP = 'adk-tests';
export const USER = 'user-1';
export const ROOT = 'assistant';

/** A random secret that must never reach a decision, an audit event or an error. */
export function canary(): string {
  return `canary-${randomBytes(12).toString('hex')}`;
}

/** One scripted model answer, or a function of the request (it may wait on the abort signal). */
export type ScriptedStep = LlmResponse | ((request: LlmRequest, signal: AbortSignal | undefined) => LlmResponse | Promise<LlmResponse>);

/**
 * A deterministic ADK model: answers its steps in order and records what it was asked and under
 * which abort signal. Running out of steps fails the call (ADK turns that into an error event).
 */
export class ScriptedLlm extends BaseLlm {
  readonly requests: Array<{ readonly contents: unknown; readonly tools: readonly string[] }> = [];
  readonly signals: Array<AbortSignal | undefined> = [];
  #cursor = 0;

  constructor(private readonly steps: readonly ScriptedStep[]) {
    super({ model: 'scripted' });
  }

  get calls(): number {
    return this.requests.length;
  }

  async *generateContentAsync(request: LlmRequest, _stream?: boolean, signal?: AbortSignal): AsyncGenerator<LlmResponse, void> {
    this.requests.push({ contents: JSON.parse(JSON.stringify(request.contents)), tools: Object.keys(request.toolsDict) });
    this.signals.push(signal);
    const step = this.steps[this.#cursor++];
    if (step === undefined) throw new Error('script exhausted');
    yield typeof step === 'function' ? await step(request, signal) : step;
  }

  async connect(): Promise<BaseLlmConnection> {
    throw new Error('no live connection in tests');
  }
}

/** A model turn calling tools. */
export function calls(...list: Array<{ name: string; args?: Record<string, unknown>; id?: string }>): LlmResponse {
  return { content: { role: 'model', parts: list.map(({ name, args, id }) => ({ functionCall: { name, args: args ?? {}, id: id ?? `call-${name}` } })) } };
}

/** A final text answer. */
export function text(value: string): LlmResponse {
  return { content: { role: 'model', parts: [{ text: value }] } };
}

/** A user message. */
export function message(value: string): AdkContent {
  return { role: 'user', parts: [{ text: value }] };
}

/** A function tool that counts its executions. */
export function countingTool(
  name: string,
  execute: (args: Record<string, unknown>) => unknown = () => ({ ok: true }),
  options: { requireConfirmation?: boolean } = {},
): { readonly tool: FunctionTool; readonly executions: () => number } {
  let executions = 0;
  const tool = new FunctionTool({
    name,
    description: `the ${name} tool`,
    requireConfirmation: options.requireConfirmation ?? false,
    execute: async (args: unknown) => {
      executions += 1;
      return execute(args as Record<string, unknown>);
    },
  });
  return { tool, executions: () => executions };
}

/** An LLM agent on a scripted model. */
export function scriptedAgent(
  name: string,
  steps: readonly ScriptedStep[],
  options: Pick<LlmAgentConfig, 'tools' | 'subAgents' | 'description' | 'beforeToolCallback' | 'afterToolCallback'> = {},
) {
  const model = new ScriptedLlm(steps);
  const agent = new LlmAgent({ instruction: 'You help.', description: `the ${name} agent`, ...options, name, model });
  return { agent, model };
}

export { Observers } from '../../../runner/testing/runner-harness';

/** A session service that records the calls it gets and the events it is asked to store. */
export class RecordingSessionService extends InMemorySessionService {
  readonly calls: string[] = [];

  override async getSession(request: Parameters<InMemorySessionService['getSession']>[0]) {
    this.calls.push('getSession');
    return super.getSession(request);
  }

  override async createSession(request: Parameters<InMemorySessionService['createSession']>[0]) {
    this.calls.push('createSession');
    return super.createSession(request);
  }

  override async appendEvent(request: Parameters<InMemorySessionService['appendEvent']>[0]) {
    this.calls.push(`appendEvent:${request.event.author ?? ''}`);
    return super.appendEvent(request);
  }
}

/** A facade with test defaults (app name, a recording in-memory session service). */
export function makeFacade(options: Partial<AdkRunnerFacadeOptions> & Pick<AdkRunnerFacadeOptions, 'agent'>): AdkRunnerFacade {
  return new AdkRunnerFacade({ appName: APP, sessionService: new RecordingSessionService(), ...options });
}

/** Every event a run yielded, and the error it ended with. */
export async function drain(stream: AsyncIterable<Event>): Promise<{ readonly events: Event[]; readonly error: unknown }> {
  const events: Event[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** The events stored in a session, read through the facade's session service. */
export async function storedEvents(facade: AdkRunnerFacade, sessionId: string, userId = USER): Promise<Event[]> {
  const session = await facade.sessionService.getSession({ appName: APP, userId, sessionId });
  return session?.events ?? [];
}

/** The audit events among `events` (author `system`, the decision under `actions`). */
export function auditEvents(events: readonly Event[]): Event[] {
  return events.filter((event) => event.author === 'system');
}

/** The decision an audit event carries. */
export function decisionOf(event: Event): PolicyDecision {
  return (event.actions as unknown as { runtime_policy_decision: PolicyDecision }).runtime_policy_decision;
}

/** The function responses of the stored events, by call id. */
export function responses(events: readonly Event[]): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const event of events) for (const part of event.content?.parts ?? []) if (part.functionResponse?.id) found.set(part.functionResponse.id, part.functionResponse.response);
  return found;
}

/** Asserts `error` is a RunnerError with that code, and returns it. */
export function expectRunnerError(error: unknown, code: RunnerErrorCode): RunnerError {
  expect(RunnerError.isRunnerError(error)).toBe(true);
  expect((error as RunnerError).code).toBe(code);
  return error as RunnerError;
}

/** A plugin built on ADK's own base class, with the callbacks given. */
export function plugin(name: string, callbacks: Partial<Record<keyof BasePlugin, unknown>>): BasePlugin {
  return Object.assign(new (class extends BasePlugin {})(name), callbacks) as BasePlugin;
}

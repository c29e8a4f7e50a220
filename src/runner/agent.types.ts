import type { Content, JsonObject, JsonValue } from './content.types';
import type { Model, ModelRequest, ModelResponse, ToolDeclaration } from './models/model.types';
import type { NewSessionEvent } from './session.types';
import type { ToolArtifacts, ToolMemory } from './tools/tool-services';

/** What every callback and tool sees of the invocation (spec 03 §2). `state` is a frozen snapshot. */
export interface ReadonlyContext {
  readonly appName: string;
  readonly userId: string;
  readonly sessionId: string;
  readonly invocationId: string;
  readonly agentName: string;
  readonly state: JsonObject;
}

/** A human's decision on a call that needed confirmation. */
export interface ConfirmationDecision {
  readonly confirmed: boolean;
  readonly payload?: JsonValue;
}

/** What a tool sees: the invocation, its call, and the signal that aborts with the invocation. */
export interface ToolContext extends ReadonlyContext {
  readonly callId: string;
  readonly signal: AbortSignal;
  /** `<invocation id>:<call id>`, stable across a resume: make side effects idempotent with it. */
  readonly idempotencyKey: string;
  readonly confirmation?: ConfirmationDecision;
  /** The session's artifacts, when the Runner has an `artifactService` (spec 03 §13). */
  readonly artifacts?: ToolArtifacts;
  /** The user's memory, when the Runner has a `memoryService` (spec 03 §13). */
  readonly memory?: ToolMemory;
}

/** Whether a call needs a human's confirmation: a fixed answer or a predicate of the arguments. */
export type ConfirmationRequirement = boolean | ((args: JsonObject, ctx: ToolContext) => boolean | Promise<boolean>);

/** A tool an agent may call (spec 03 §2). */
export interface Tool {
  /** `^[A-Za-z0-9_-]{1,64}$`. */
  readonly name: string;
  readonly description?: string;
  /** JSON Schema (draft 2020-12) of the arguments, compiled once with Ajv in strict mode. @default any plain object */
  readonly parameters?: JsonObject;
  /** @default false; a throwing predicate counts as `true` */
  readonly requireConfirmation?: ConfirmationRequirement;
  /** Text shown to the human with a confirmation request. */
  readonly confirmationHint?: string;
  execute(args: JsonObject, ctx: ToolContext): JsonValue | Promise<JsonValue>;
}

/**
 * A dynamic set of tools: a cheap name preflight, and materialisation only for calls the policy
 * allowed (spec 03 §2).
 */
export interface Toolset {
  readonly name: string;
  /** Names only: no backend call, credential or tool construction. */
  listToolNames(ctx: ReadonlyContext): readonly string[] | Promise<readonly string[]>;
  /** Builds the tool; it must carry the requested name (anything else is `tool_unavailable`). */
  materialize(name: string, ctx: ReadonlyContext): Tool | Promise<Tool>;
  /** Model-facing declarations; without it each name is declared with an open object schema. */
  declarations?(ctx: ReadonlyContext): readonly ToolDeclaration[] | Promise<readonly ToolDeclaration[]>;
  /** Runs once when an invocation that materialised from this toolset ends. */
  close?(): void | Promise<void>;
}

/** Arguments of the tool-call hooks. */
export interface ToolHookArgs {
  readonly ctx: ToolContext;
  readonly tool: Tool;
  readonly args: JsonObject;
}

/** Replaces the arguments of a call from a `beforeToolCallback`; build it with {@link amendToolCall}. */
export interface ToolAmendment {
  readonly [key: string]: unknown;
}

/** The tool-call hooks an agent may carry locally; they run after every plugin's. */
export interface ToolCallbacks {
  /** A plain object becomes the result (the tool does not run); a {@link ToolAmendment} replaces the arguments. */
  beforeToolCallback?(input: ToolHookArgs): JsonObject | ToolAmendment | undefined | Promise<JsonObject | ToolAmendment | undefined>;
  /** Replaces the result. */
  afterToolCallback?(input: ToolHookArgs & { readonly result: JsonValue }): JsonValue | undefined | Promise<JsonValue | undefined>;
}

/** An agent (spec 03 §2). */
export interface Agent extends ToolCallbacks {
  /** 1..256 UTF-8 bytes: also the admission agent id and the policy subject; a sub-agent's name is a tool name. */
  readonly name: string;
  readonly model: Model;
  /** Offered to the parent model when this agent is a sub-agent. */
  readonly description?: string;
  readonly instruction?: string | ((ctx: ReadonlyContext) => string);
  /** Static tools and dynamic toolsets, in precedence order. */
  readonly tools?: readonly (Tool | Toolset)[];
  readonly subAgents?: readonly Agent[];
  /** Run the allowed calls of one turn concurrently. @default false */
  readonly parallelToolCalls?: boolean;
  /** A returned response replaces the model call. */
  beforeModelCallback?(input: { readonly ctx: ReadonlyContext; readonly request: ModelRequest }): ModelResponse | undefined | Promise<ModelResponse | undefined>;
  /** A returned response replaces the model's response. */
  afterModelCallback?(input: { readonly ctx: ReadonlyContext; readonly response: ModelResponse }): ModelResponse | undefined | Promise<ModelResponse | undefined>;
}

/** What `onEventCallback` may replace in an event about to be stored. */
export interface EventReplacement {
  readonly content?: JsonValue;
  readonly actions?: JsonObject;
}

/**
 * A global plugin (spec 03 §2): hooks run in registration order before any agent-local callback;
 * the first non-`undefined` return short-circuits the rest of that chain.
 */
export interface RunnerPlugin extends ToolCallbacks {
  /** Unique among the Runner's plugins. */
  readonly name: string;
  /** The returned Content replaces the user message. */
  onUserMessageCallback?(input: { readonly ctx: ReadonlyContext; readonly userMessage: Content }): Content | undefined | Promise<Content | undefined>;
  /** The returned Content is the final output: no model call. */
  beforeRunCallback?(input: { readonly ctx: ReadonlyContext }): Content | undefined | Promise<Content | undefined>;
  /** Becomes the result instead of a `tool_error` response. */
  onToolErrorCallback?(input: ToolHookArgs & { readonly error: unknown }): JsonValue | undefined | Promise<JsonValue | undefined>;
  /** Replaces `content` and/or `actions` of a non-audit event about to be stored. */
  onEventCallback?(input: { readonly ctx: ReadonlyContext; readonly event: NewSessionEvent }): EventReplacement | undefined | Promise<EventReplacement | undefined>;
  /** Observes the final output; a throw is logged without content and ignored. */
  afterRunCallback?(input: { readonly ctx: ReadonlyContext; readonly output: Content }): void | Promise<void>;
  /** Observes a failed run; a throw is swallowed. */
  onRunErrorCallback?(input: { readonly ctx: ReadonlyContext; readonly error: unknown }): void | Promise<void>;
}

const AMENDMENT = Symbol('nest-agent-runtime.toolAmendment');

/**
 * A `beforeToolCallback` return that replaces a call's arguments. It copies whatever keys it is
 * given; the Runner refuses any key other than `args` (`invalid_plugin_amendment`).
 *
 * @example
 * beforeToolCallback: ({ args }) => amendToolCall({ args: { ...args, limit: 10 } })
 */
export function amendToolCall(amendment: { readonly args: JsonObject; readonly [key: string]: unknown }): ToolAmendment {
  const copy: Record<string | symbol, unknown> = { ...amendment };
  Object.defineProperty(copy, AMENDMENT, { value: true });
  return Object.freeze(copy) as ToolAmendment;
}

/** True for a value built by {@link amendToolCall}. */
export function isToolAmendment(value: unknown): value is ToolAmendment {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AMENDMENT] === true;
}

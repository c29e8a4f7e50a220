export { Runner } from './runner';
export { RunnerError, type RunnerErrorCode } from './runner.errors';
export type { RunnerOptions, RunnerAdmissionOptions, RunnerAdmissionController, RunnerLogger, RunRequest, ResumeRequest, RunResult, RunStream } from './runner.types';
export {
  amendToolCall,
  type Agent,
  type Tool,
  type Toolset,
  type ToolAmendment,
  type ToolCallbacks,
  type RunnerPlugin,
  type ReadonlyContext,
  type ToolContext,
  type ConfirmationDecision,
  type ConfirmationRequirement,
  type EventReplacement,
  type ToolHookArgs,
} from './agent.types';
export type { Content, Part, Message } from './content.types';
export type { JsonObject } from '../json/json.types';
export type { Model, ModelRequest, ModelResponse, ModelToolCall, ModelUsage, HistoryEntry, ToolCall, ToolDeclaration } from './model.types';
export type { SessionService, SessionRef, SessionRecord, SessionEvent, NewSessionEvent, SessionEventKind, ListEventsOptions, UpdateStateOptions } from './session.types';
export { ScriptedModel, type ScriptedModelOptions, type ScriptedStep } from './scripted-model';
export { OpenAICompatibleModel, type OpenAICompatibleModelOptions } from './openai-compatible-model';
export { InMemorySessionService, type InMemorySessionServiceOptions } from './in-memory-session-service';
export { PostgresSessionService, type PostgresSessionServiceOptions } from './postgres-session-service';
export { SESSION_TABLE_SPEC, SESSION_EVENT_TABLE_SPEC } from './session.schema';
export { RunRegistry } from './run-registry';
export { HANDOVER_REASON } from './invocation-scope';
export type { RunRegistryOptions } from './run-registry-options';
export type {
  ConfirmationInput,
  RegistryRunner,
  RunError,
  RunRegistryStatus,
  RunStarted,
  RunStatus,
  RunStatusRecord,
  RunStreamItem,
  StartRunRequest,
  SubscribeOptions,
} from './run-registry.types';
export type { RunSubscription } from './run-subscription';
export { InMemoryRunStore } from './in-memory-run-store';
export type { RunStore } from './run-store';
export { RunsModule, type RunsModuleAsyncOptions, type RunsOptionsFactory } from './runs.module';
export type { ResolveUserId, RunsModuleOptions } from './runs-module-options';
export { RunsHealthIndicator } from './runs.health';
export type { ToolArtifacts, ToolMemory } from './tool-services';

export { Runner } from './runner';
export { RunnerError, type RunnerErrorCode } from './runner.errors';
export type { RunnerOptions, RunnerAdmissionOptions, AdmissionRunContext, RunnerLogger, RunRequest, ResumeRequest, RunResult, RunStream } from './runner.types';
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
export type { Model, ModelRequest, ModelResponse, ModelToolCall, ModelUsage, HistoryEntry, ToolCall, ToolDeclaration } from './models/model.types';
export type { SessionService, SessionRef, SessionRecord, SessionEvent, NewSessionEvent, SessionEventKind, ListEventsOptions, UpdateStateOptions } from './session.types';
export { ScriptedModel, type ScriptedModelOptions, type ScriptedStep } from './models/scripted-model';
export { OpenAICompatibleModel, type OpenAICompatibleModelOptions } from './models/openai-compatible-model';
export { RunRegistry } from './runs/run-registry';
export { HANDOVER_REASON } from './invocation/invocation-scope';
export type { RunRegistryOptions } from './runs/run-registry-options';
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
} from './runs/run-registry.types';
export type { RunSubscription } from './runs/run-subscription';
export { InMemoryRunStore } from './runs/stores/in-memory-run-store';
export { RunStore } from './runs/stores/run-store';
export { PostgresRunStore, PostgresRunStoreProvider, type PostgresRunStoreOptions } from './runs/stores/postgres';
export { RunsModule, type RunsModuleAsyncOptions, type RunsOptionsFactory, type RunStoreDeclaration, type RunStoreProvider } from './runs/runs.module';
export type { RunsModuleOptions } from './runs/runs-module-options';
export { RunAccess, type AuthorizeRun, type OwnedRun, type RunAction } from './runs/run-access';
export { RunsHealthIndicator } from './runs/runs.health';
export type { ToolArtifacts, ToolMemory } from './tools/tool-services';
export type { ToolCallOutcome } from './tools/tool-call-step';
export type { RunTracer, RunSpans, ChatSpan, ToolSpan, WorkSpan, RunAdmissionOutcome } from './tracing/run-tracer';

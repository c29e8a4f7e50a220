/**
 * `nest-agent-runtime/adk`: the optional Google ADK adapter (spec 03 §11). `@google/adk` (`~2.0.0`)
 * is an optional peer, required on first use: importing this entry point never loads it.
 */
export { AdkRunnerFacade } from './adk-runner-facade';
export type { AdkRunnerFacadeOptions } from './adk-facade-options';
export type { AdkRunRequest } from './adk-run-request';
export { AdkSafetyPlugin, type AdkSafetyPluginOptions } from './adk-safety-plugin';
export { BudgetGuardSessionService, type BudgetGuardSessionServiceOptions } from './budget-guard-session-service';
export { installAgentGuards, type AgentGuardOptions } from './agent-guards';
export type { AdkGuardOptions } from './adk-guard-options';
export { AdkAdapterError, type AdkAdapterErrorCode } from './adk-adapter.errors';
export { ADK_SAFETY_PLUGIN_NAME } from './adk-plugin-chain';
export type { AdkContent, AdkEvent } from './adk.types';

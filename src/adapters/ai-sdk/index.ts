/**
 * `nest-agent-runtime/ai-sdk`: the runtime policy and admission control for the Vercel AI SDK (`ai` 7).
 * Nothing here loads `ai` at run time (tools and middleware are plain objects), and the package's
 * core entry point never loads this one.
 */
export { guardTools } from './guard-tools';
export { runtimeSafetyMiddleware } from './runtime-safety.middleware';
export { withAdmission } from './with-admission';
export type { GuardToolsOptions, RuntimeSafetyMiddlewareOptions } from './ai-sdk-options';
export type { ToolRefusal } from './tool-set-reader';
export { isToolDenial, type ToolDenial, type ToolDenialError } from './tool-denial';

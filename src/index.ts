/**
 * nest-agent-runtime: runtime safety for AI-agent services on NestJS. Every module also has its own
 * entry point (`nest-agent-runtime/admission`, `/policy`, …) that loads only what that module needs.
 */
export * from './admission';
export * from './policy';
export * from './ledger';
export * from './runner';
export * from './trace';
export * from './evaluation';
export * from './services';
export * from './cluster';
export * from './observability';
export * from './database';
export * from './health';
export * from './http';
export type { ModuleAsyncOptions } from './shared/nest/module.builder';
export { systemClock, type Clock } from './shared/time/clock';
export type { ErrorDetails } from './shared/errors/agent-runtime-error';
export type { TelemetrySink } from './telemetry/telemetry-sink';
export { TelemetryEvents } from './telemetry/telemetry-events';

/** nest-agent-runtime: runtime safety for AI-agent services on NestJS. */
export * from './admission';
export * from './policy';
export * from './ledger';
export * from './database';
export * from './health';
export { AdmissionHealthIndicator } from './admission/admission.health';
export { LedgerHealthIndicator } from './ledger/ledger.health';
export { DatabaseHealthIndicator } from './database/database.health';
export { AgentRuntimeExceptionFilter } from './agent-runtime-exception.filter';
export { useJsonBodyLimits, jsonDepthVerifier, type JsonBodyLimitsOptions } from './shared/json-depth-limit';
export { requestValidationExceptionFactory, JsonObjectBodyPipe } from './shared/request-body-validation';
export { HttpRequestError, type HttpRequestErrorCode } from './shared/http-request.errors';
export type { HttpErrorBody } from './shared/http-error-mapper';
export type { ModuleAsyncOptions } from './shared/module-builder';
export { systemClock, type Clock } from './shared/clock';
export type { ErrorDetails } from './shared/agent-runtime-error';
export type { TelemetrySink } from './telemetry/telemetry-sink';
export { TelemetryEvents } from './telemetry/telemetry-events';

/** nest-agent-runtime: runtime safety for AI-agent services on NestJS. */
export * from './admission';
export { AdmissionHealthIndicator } from './admission/admission.health';
export * from './policy';
export * from './database';
export * from './ledger';
export { LedgerHealthIndicator } from './ledger/ledger.health';
export { DatabaseHealthIndicator } from './database/database.health';
export { systemClock, type Clock } from './shared/clock';
export type { ErrorDetails } from './shared/agent-runtime-error';
export type { TelemetrySink } from './telemetry/telemetry-sink';
export { TelemetryEvents } from './telemetry/telemetry-events';

/** nest-agent-runtime: runtime safety for AI-agent services on NestJS. */
export * from './admission';
export { AdmissionHealthIndicator } from './admission/admission.health';
export type { Clock } from './shared/clock';
export type { TelemetrySink } from './telemetry/telemetry-sink';
export { TelemetryEvents } from './telemetry/telemetry-events';
export { openProjectDatabase, startEmbeddedPostgres, type DatabaseHandle, type EmbeddedPostgresOptions } from './database/embedded-postgres';
export { agentRuntimeDataSourceOptions, createAgentRuntimeDataSource, runAgentRuntimeMigrations, MIGRATIONS_TABLE } from './database/data-source.factory';

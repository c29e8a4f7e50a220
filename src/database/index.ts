/** `nest-agent-runtime/database`: the data source and migrations of the package's tables, and the database's readiness. */
export { agentRuntimeDataSourceOptions, createAgentRuntimeDataSource, runAgentRuntimeMigrations } from './data-source.factory';
export { AGENT_RUNTIME_MIGRATIONS } from '../../migrations';
export { DatabaseHealthIndicator } from './database.health';
export { SchemaValidatorError, type SchemaValidatorErrorCode } from './schema-validator.errors';
export type { AppDataSourceOptions } from './app-data-source';
export type { SchemaMismatch, SchemaMismatchProperty } from './schema/schema-comparison';

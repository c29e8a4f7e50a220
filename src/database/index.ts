/** `nest-agent-runtime/database`: the data source and migrations of the package's tables, and the database's readiness. */
export {
  agentRuntimeDataSourceOptions,
  createAgentRuntimeDataSource,
  runAgentRuntimeMigrations,
  type AgentRuntimeDataSourceOverrides,
  type AgentRuntimeMigrationSelection,
} from './data-source.factory';
export { AGENT_RUNTIME_MIGRATION_GROUPS, AGENT_RUNTIME_MIGRATIONS_TABLE, agentRuntimeMigrations, type AgentRuntimeMigrationGroup } from './migration-groups';
export { DatabaseOptionsError, type DatabaseOptionsErrorCode } from './database-options.errors';
export { DatabaseHealthIndicator } from './database.health';
export { SchemaValidatorError, type SchemaValidatorErrorCode } from './schema-validator.errors';
export type { AppDataSourceOptions } from './app-data-source';
export type { SchemaMismatch, SchemaMismatchProperty } from './schema/schema-comparison';

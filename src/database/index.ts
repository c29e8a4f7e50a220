export {
  validateSchema,
  assertSchema,
  type SchemaReport,
  type SchemaValidationOptions,
  type DedicatedConnection,
} from './schema-validator';
export type { SchemaMismatch, SchemaMismatchProperty } from './schema-comparison';
export { SchemaValidatorError, type SchemaValidatorErrorCode } from './schema-validator.errors';
export {
  defineTableSpec,
  isPostgresIdentifier,
  POSTGRES_IDENTIFIER,
  type TableSpec,
  type ColumnSpec,
  type UniqueSpec,
  type IndexSpec,
  type CheckSpec,
  type ForeignKeySpec,
  type ForeignKeyAction,
} from './table-spec';
export { agentRuntimeDataSourceOptions, createAgentRuntimeDataSource, runAgentRuntimeMigrations, MIGRATIONS_TABLE } from './data-source.factory';
export { openProjectDatabase, startEmbeddedPostgres, type DatabaseHandle, type EmbeddedPostgresOptions } from './embedded-postgres';
export { AGENT_RUNTIME_MIGRATIONS } from '../../migrations';

export {
  validateSchema,
  assertSchema,
  type SchemaReport,
  type SchemaValidationOptions,
  type DedicatedConnection,
} from './schema/schema-validator';
export type { SchemaMismatch, SchemaMismatchProperty } from './schema/schema-comparison';
export { SchemaValidatorError, type SchemaValidatorErrorCode } from './schema-validator.errors';
export {
  defineTableSpec,
  isPostgresIdentifier,
  type TableSpec,
  type ColumnSpec,
  type UniqueSpec,
  type IndexSpec,
  type CheckSpec,
  type ForeignKeySpec,
  type ForeignKeyAction,
  type TriggerSpec,
  type TriggerTiming,
  type TriggerEvent,
  type TriggerLevel,
} from './schema/table-spec';
export { fingerprintFunction } from './schema/trigger-comparison';
export { agentRuntimeDataSourceOptions, createAgentRuntimeDataSource, runAgentRuntimeMigrations } from './data-source.factory';
export { AGENT_RUNTIME_MIGRATIONS } from '../../migrations';

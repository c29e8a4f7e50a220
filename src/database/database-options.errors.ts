import type { HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';

const DATABASE_OPTIONS_ERROR_CODES = Object.freeze(['invalid_database_options'] as const);

/**
 * `invalid_database_options`: the options of the package's data source or migrations were refused
 * before anything connected: `{field: 'url'}` for a missing or empty URL, `{field: 'modules'}` for a
 * module list that is not a list of known group names.
 */
export type DatabaseOptionsErrorCode = (typeof DATABASE_OPTIONS_ERROR_CODES)[number];

/** The error of `agentRuntimeDataSourceOptions`, `agentRuntimeMigrations` and `runAgentRuntimeMigrations` for bad options. */
export class DatabaseOptionsError extends AgentRuntimeError<DatabaseOptionsErrorCode> {
  /** Every code of {@link DatabaseOptionsErrorCode}. */
  static readonly codes: readonly DatabaseOptionsErrorCode[] = DATABASE_OPTIONS_ERROR_CODES;

  /** A configuration fault of the deployment, never of a request. */
  static readonly httpAnswers: HttpErrorTable<DatabaseOptionsErrorCode> = Object.freeze({ invalid_database_options: { status: 500 } });

  constructor(code: DatabaseOptionsErrorCode, details: { field: 'url' | 'modules' }) {
    super('DatabaseOptionsError', code, details);
  }
}

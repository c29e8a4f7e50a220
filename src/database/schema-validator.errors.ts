import type { HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import type { SchemaMismatch } from './schema/schema-comparison';

const SCHEMA_VALIDATOR_ERROR_CODES = Object.freeze(['database_unreachable', 'catalog_read_failed', 'schema_mismatch'] as const);

/**
 * Why the validator could not read the catalog: `database_unreachable` after the connection
 * retries were spent, `catalog_read_failed` for any other database error (for example missing
 * privileges). A mismatch found by `validateSchema` is not an error; it is a report.
 * `schema_mismatch` is raised before migrations run, when objects of a migration exist while its
 * row in the migrations table is missing (re-running it would fail or double-apply it).
 */
export type SchemaValidatorErrorCode = (typeof SCHEMA_VALIDATOR_ERROR_CODES)[number];

/** Details of a failure to read: attempts, the SQLSTATE and the Node socket code, each when known. */
export type SchemaReadFailureDetails = { attempts: number; sqlstate: string | null; socket_error: string | null };

/**
 * The error of the schema validator. `details` carries the number of attempts, the SQLSTATE and
 * the Node socket code (`ECONNREFUSED`, or `connect_timeout` when an attempt ran out of time) when
 * there is one — never database error text, which may name hosts or users — or, for
 * `schema_mismatch`, the mismatches. Calling modules map it to their own codes (the ledger's
 * `ledger_unavailable`, …).
 */
export class SchemaValidatorError extends AgentRuntimeError<SchemaValidatorErrorCode> {
  /** Every code of {@link SchemaValidatorErrorCode}. */
  static readonly codes: readonly SchemaValidatorErrorCode[] = SCHEMA_VALIDATOR_ERROR_CODES;

  /**
   * The HTTP answer of each code: a database out of reach is an outage (503 with `Retry-After`); a
   * catalog the role may not read or a schema that does not match is a fault of the deployment (500).
   */
  static readonly httpAnswers: HttpErrorTable<SchemaValidatorErrorCode> = Object.freeze({
    database_unreachable: { status: 503, retryAfter: true },
    catalog_read_failed: { status: 500 },
    schema_mismatch: { status: 500 },
  });

  constructor(code: 'schema_mismatch', details: { mismatches: readonly SchemaMismatch[] });
  constructor(code: 'database_unreachable' | 'catalog_read_failed', details: SchemaReadFailureDetails);
  constructor(code: SchemaValidatorErrorCode, details: SchemaReadFailureDetails | { mismatches: readonly SchemaMismatch[] }) {
    super('SchemaValidatorError', code, details);
  }
}

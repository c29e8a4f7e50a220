import { AgentRuntimeError } from '../shared/agent-runtime-error';

/**
 * Why the validator could not read the catalog: `database_unreachable` after the connection
 * retries were spent, `catalog_read_failed` for any other database error (for example missing
 * privileges). A schema mismatch is not an error here; it is a report.
 */
export type SchemaValidatorErrorCode = 'database_unreachable' | 'catalog_read_failed';

/**
 * The error of the schema validator. `details` carries the number of attempts, the SQLSTATE and
 * the Node socket code (`ECONNREFUSED`, or `connect_timeout` when an attempt ran out of time) when
 * there is one — never database error text, which may name hosts or users.
 * Calling modules map it to their own codes (the ledger's `ledger_unavailable`, …).
 */
export class SchemaValidatorError extends AgentRuntimeError<SchemaValidatorErrorCode> {
  constructor(code: SchemaValidatorErrorCode, details: { attempts: number; sqlstate: string | null; socket_error: string | null }) {
    super('SchemaValidatorError', code, details);
  }
}

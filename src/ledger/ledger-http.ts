import { httpErrorAnswer, type HttpErrorAnswer, type HttpErrorRule, type HttpErrorTable } from '../http/http-error-mapper';
import { LedgerError, type LedgerErrorCode, type LedgerOperation } from './ledger.errors';

const OUTAGE: HttpErrorRule = { status: 503, retryAfter: true };
const CONFLICT: HttpErrorRule = { status: 409 };
const BAD_ARGUMENTS: HttpErrorRule = { status: 400, details: ['field', 'fields'] };
/** Every operation, as a record so that a new operation cannot be forgotten here. */
const OPERATION_SET: Readonly<Record<LedgerOperation, true>> = {
  create: true,
  create_and_claim: true,
  claim: true,
  renew: true,
  checkpoint: true,
  finish: true,
  delete: true,
  get: true,
  list_expired: true,
  recover_expired: true,
};
const OPERATIONS = Object.keys(OPERATION_SET) as LedgerOperation[];

/**
 * HTTP answers of the ledger's codes: an outage (the database, a rolled-back statement, a lost lease
 * or lock, whose `details.reason` is shown) is 503 with `Retry-After`, a conflict 409, a bad argument
 * 400 naming the field; any other code is 500 with the code only.
 */
export const LEDGER_HTTP_ERRORS: HttpErrorTable<LedgerErrorCode> = Object.freeze({
  ledger_unavailable: { ...OUTAGE, details: ['reason'] },
  transaction_aborted: OUTAGE,
  stale_owner: OUTAGE,
  lease_expired: OUTAGE,
  not_found: { status: 404 },
  already_exists: CONFLICT,
  invocation_owned: CONFLICT,
  completed: CONFLICT,
  ...Object.fromEntries(OPERATIONS.map((operation) => [`invalid_${operation}_arguments`, BAD_ARGUMENTS])),
});

/** The HTTP form of a {@link LedgerError}; `undefined` for anything else. */
export function ledgerHttpAnswer(error: unknown): HttpErrorAnswer | undefined {
  return LedgerError.isLedgerError(error) ? httpErrorAnswer(error, LEDGER_HTTP_ERRORS) : undefined;
}

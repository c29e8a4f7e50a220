import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** The ledger's operations, in the order of spec 04 §5. */
export const LEDGER_OPERATIONS = ['create', 'claim', 'create_and_claim', 'renew', 'checkpoint', 'finish', 'delete', 'get', 'list_expired', 'recover_expired'] as const;

/** The operations of an {@link InvocationLedger}, each with its own `invalid_<operation>_arguments` code. */
export type LedgerOperation = (typeof LEDGER_OPERATIONS)[number];

const ARGUMENTS_CODES = LEDGER_OPERATIONS.map((operation) => `invalid_${operation}_arguments` as const);

const LEDGER_ERROR_CODES = Object.freeze([
  'already_exists',
  'not_found',
  'completed',
  'invocation_owned',
  'lease_expired',
  'stale_owner',
  'invalid_terminal_phase',
  ...ARGUMENTS_CODES,
  'invalid_ledger_options',
  'invalid_ledger_handle',
  'schema_mismatch',
  'ledger_unavailable',
  'ledger_instance_id_in_use',
  'transaction_aborted',
] as const);

/** Every code a {@link LedgerError} carries (spec 04 §7). */
export type LedgerErrorCode = (typeof LEDGER_ERROR_CODES)[number];

const OUTAGE: HttpErrorRule = { status: 503, retryAfter: true };
const CONFLICT: HttpErrorRule = { status: 409 };
const BAD_ARGUMENTS: HttpErrorRule = { status: 400, details: ['field', 'fields'] };
const FAULT: HttpErrorRule = { status: 500 };

/**
 * The error of the invocation ledger: a code, and details that never carry checkpoints, outcomes,
 * tokens, ids or database error text (`details.sqlstate` may carry the five-character SQLSTATE).
 */
export class LedgerError extends AgentRuntimeError<LedgerErrorCode> {
  /** Every code of {@link LedgerErrorCode}. */
  static readonly codes: readonly LedgerErrorCode[] = LEDGER_ERROR_CODES;

  /**
   * The HTTP answer of each code: an outage (the database, a rolled-back statement, a lost lease or
   * lock, whose `details.reason` is shown) is 503 with `Retry-After`, a conflict 409, a bad argument
   * 400 naming the field; a bad phase, options, handle, schema or instance id is a fault of the
   * application (500 with the code only).
   */
  static readonly httpAnswers: HttpErrorTable<LedgerErrorCode> = Object.freeze({
    ledger_unavailable: { ...OUTAGE, details: ['reason'] },
    transaction_aborted: OUTAGE,
    stale_owner: OUTAGE,
    lease_expired: OUTAGE,
    not_found: { status: 404 },
    already_exists: CONFLICT,
    invocation_owned: CONFLICT,
    completed: CONFLICT,
    ...(Object.fromEntries(ARGUMENTS_CODES.map((code) => [code, BAD_ARGUMENTS])) as Record<(typeof ARGUMENTS_CODES)[number], HttpErrorRule>),
    invalid_terminal_phase: FAULT,
    invalid_ledger_options: FAULT,
    invalid_ledger_handle: FAULT,
    schema_mismatch: FAULT,
    ledger_instance_id_in_use: FAULT,
  });

  constructor(code: LedgerErrorCode, details?: ErrorDetails) {
    super('LedgerError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isLedgerError(value: unknown): value is LedgerError {
    return AgentRuntimeError.isAgentRuntimeError(value, LedgerError);
  }
}

import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** The operations of an {@link InvocationLedger}, each with its own `invalid_<operation>_arguments` code. */
export type LedgerOperation =
  | 'create'
  | 'claim'
  | 'create_and_claim'
  | 'renew'
  | 'checkpoint'
  | 'finish'
  | 'delete'
  | 'get'
  | 'list_expired'
  | 'recover_expired';

/** Every code a {@link LedgerError} carries (spec 04 §7). */
export type LedgerErrorCode =
  | 'already_exists'
  | 'not_found'
  | 'completed'
  | 'invocation_owned'
  | 'lease_expired'
  | 'stale_owner'
  | 'invalid_terminal_phase'
  | `invalid_${LedgerOperation}_arguments`
  | 'invalid_ledger_options'
  | 'invalid_ledger_handle'
  | 'schema_mismatch'
  | 'ledger_unavailable'
  | 'ledger_instance_id_in_use'
  | 'transaction_aborted';

/**
 * The error of the invocation ledger: a code, and details that never carry checkpoints, outcomes,
 * tokens, ids or database error text (`details.sqlstate` may carry the five-character SQLSTATE).
 */
export class LedgerError extends AgentRuntimeError<LedgerErrorCode> {
  constructor(code: LedgerErrorCode, details?: ErrorDetails) {
    super('LedgerError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isLedgerError(value: unknown): value is LedgerError {
    return AgentRuntimeError.isAgentRuntimeError(value, LedgerError);
  }
}

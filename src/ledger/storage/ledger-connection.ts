import { isRolledBack, type PostgresFailure } from '../../database/postgres-failure';
import type { PgPool, StatementRows } from '../../database/postgres-pool';
import { runStatement, type StatementStage } from '../../database/statement-runner';
import { LedgerError } from '../ledger.errors';

/**
 * The ledger's reading of a database failure: failing to get a connection is `ledger_unavailable`;
 * a rollback (serialisation failure, deadlock, statement timeout, connection lost mid-statement)
 * is `transaction_aborted`; any other database error is `ledger_unavailable`. Only the SQLSTATE
 * and the socket code are kept.
 */
export function ledgerFailure(failure: PostgresFailure, stage: StatementStage): LedgerError {
  const code = stage === 'statement' && isRolledBack(failure) ? 'transaction_aborted' : 'ledger_unavailable';
  return new LedgerError(code, { ...failure.codes });
}

/** Runs one ledger statement on a pooled connection, failures mapped by {@link ledgerFailure}. */
export function ledgerStatement(pool: PgPool, text: string, values: unknown[]): Promise<StatementRows> {
  return runStatement(pool, text, values, ledgerFailure);
}

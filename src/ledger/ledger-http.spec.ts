import { ledgerHttpAnswer } from './ledger-http';
import { LedgerError, type LedgerErrorCode } from './ledger.errors';

describe('HTTP answers of the ledger', () => {
  it.each<[LedgerErrorCode, number, boolean]>([
    ['ledger_unavailable', 503, true],
    ['transaction_aborted', 503, true],
    ['stale_owner', 503, true],
    ['lease_expired', 503, true],
    ['not_found', 404, false],
    ['already_exists', 409, false],
    ['invocation_owned', 409, false],
    ['completed', 409, false],
    ['invalid_claim_arguments', 400, false],
    ['invalid_get_arguments', 400, false],
    ['schema_mismatch', 500, false],
    ['invalid_terminal_phase', 500, false],
  ])('%s answers %i (Retry-After: %p) with its code', (code, status, retryAfter) => {
    expect(ledgerHttpAnswer(new LedgerError(code))).toEqual({ status, retryAfter, body: expect.objectContaining({ status_code: status, code }) });
  });

  it('shows the reason of a lost instance lock and never the SQLSTATE or socket error', () => {
    expect(ledgerHttpAnswer(new LedgerError('ledger_unavailable', { reason: 'instance_lock_not_held' }))?.body.details).toEqual({ reason: 'instance_lock_not_held' });
    expect(ledgerHttpAnswer(new LedgerError('ledger_unavailable', { sqlstate: '57P01', socket_error: null }))?.body).not.toHaveProperty('details');
  });

  it('names the field of a bad argument', () => {
    expect(ledgerHttpAnswer(new LedgerError('invalid_create_arguments', { field: 'workflowId' }))?.body.details).toEqual({ field: 'workflowId' });
  });

  it('leaves anything but a LedgerError to others', () => {
    expect(ledgerHttpAnswer(new Error('ledger_unavailable'))).toBeUndefined();
  });
});

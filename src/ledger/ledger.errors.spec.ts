import { agentRuntimeErrorAnswer, httpErrorAnswer } from '../http/http-error-mapper';
import { LedgerError, type LedgerErrorCode } from './ledger.errors';

const answer = (error: unknown) => (LedgerError.isLedgerError(error) ? httpErrorAnswer(error, LedgerError.httpAnswers) : undefined);

describe('LedgerError', () => {
  it('carries its code and frozen details, and names itself', () => {
    const error = new LedgerError('invalid_claim_arguments', { field: 'leaseMs' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('LedgerError');
    expect(error.code).toBe('invalid_claim_arguments');
    expect(error.details).toEqual({ field: 'leaseMs' });
    expect(Object.isFrozen(error.details)).toBe(true);
  });

  it('is recognised by its brand, and look-alikes are not', () => {
    expect(LedgerError.isLedgerError(new LedgerError('stale_owner'))).toBe(true);
    expect(LedgerError.isLedgerError({ name: 'LedgerError', code: 'stale_owner' })).toBe(false);
    expect(LedgerError.isLedgerError(Object.create(LedgerError.prototype))).toBe(false);
    expect(LedgerError.isLedgerError(null)).toBe(false);
  });
});

describe('LedgerError.httpAnswers', () => {
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
    expect(answer(new LedgerError(code))).toEqual({ status, retryAfter, body: expect.objectContaining({ status_code: status, code }) });
  });

  it('shows the reason of a lost instance lock and never the SQLSTATE or socket error', () => {
    expect(answer(new LedgerError('ledger_unavailable', { reason: 'instance_lock_not_held' }))?.body.details).toEqual({ reason: 'instance_lock_not_held' });
    expect(answer(new LedgerError('ledger_unavailable', { sqlstate: '57P01', socket_error: null }))?.body).not.toHaveProperty('details');
  });

  it('names the field of a bad argument', () => {
    expect(answer(new LedgerError('invalid_create_arguments', { field: 'workflowId' }))?.body.details).toEqual({ field: 'workflowId' });
  });

  it('is the table the exception filter reads from the error, and leaves anything but a LedgerError to others', () => {
    expect(agentRuntimeErrorAnswer(new LedgerError('stale_owner'))).toEqual(answer(new LedgerError('stale_owner')));
    expect(answer(new Error('ledger_unavailable'))).toBeUndefined();
  });
});

import { LedgerError } from './ledger.errors';

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

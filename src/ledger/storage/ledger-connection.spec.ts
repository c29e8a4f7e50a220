import { classifyFailure } from '../../database/postgres-failure';
import { ledgerFailure } from './ledger-connection';

describe('ledger connection', () => {
  it('maps rollbacks and lost connections to transaction_aborted, everything else to ledger_unavailable, keeping only codes', () => {
    const cases: Array<[unknown, string, string | null]> = [
      [Object.assign(new Error('could not serialize access'), { code: '40001' }), 'transaction_aborted', '40001'],
      [Object.assign(new Error('deadlock detected'), { code: '40P01' }), 'transaction_aborted', '40P01'],
      [Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), 'transaction_aborted', '57014'],
      [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 'transaction_aborted', '57P01'],
      [new Error('Connection terminated unexpectedly'), 'transaction_aborted', null],
      [Object.assign(new Error('relation "secret_table" does not exist'), { code: '42P01' }), 'ledger_unavailable', '42P01'],
      ['not even an error', 'ledger_unavailable', null],
    ];
    for (const [error, code, sqlstate] of cases) {
      const mapped = ledgerFailure(classifyFailure(error), 'statement');
      expect([mapped.code, mapped.details?.sqlstate]).toEqual([code, sqlstate]);
      expect(mapped.message).not.toContain('secret_table');
    }
  });

  it('a failure to get a connection is ledger_unavailable, whatever its class', () => {
    const refused = ledgerFailure(classifyFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), 'connect');
    expect([refused.code, refused.details]).toEqual(['ledger_unavailable', { sqlstate: null, socket_error: 'ECONNREFUSED' }]);
  });
});

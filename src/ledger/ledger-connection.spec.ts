import { poolOf, statementFailure } from './ledger-connection';

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
      const mapped = statementFailure(error);
      expect([mapped.code, mapped.details?.sqlstate]).toEqual([code, sqlstate]);
      expect(mapped.message).not.toContain('secret_table');
    }
  });

  it('finds the pg pool of an initialised Postgres DataSource only', () => {
    const pool = { connect: () => undefined, Client: function Client() {}, options: {} };
    expect(poolOf({ isInitialized: true, options: { type: 'postgres' }, driver: { master: pool } })).toBe(pool);
    expect(poolOf({ isInitialized: false, options: { type: 'postgres' }, driver: { master: pool } })).toBeNull();
    expect(poolOf({ isInitialized: true, options: { type: 'mysql' }, driver: { master: pool } })).toBeNull();
    expect(poolOf({ isInitialized: true, options: { type: 'postgres' }, driver: {} })).toBeNull();
    expect(poolOf(undefined)).toBeNull();
    expect(poolOf(new Proxy({}, { get: () => { throw new Error('x'); } }))).toBeNull();
  });
});

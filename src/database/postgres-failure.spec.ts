import { classifyFailure, isRolledBack } from './postgres-failure';

describe('classifyFailure (what is retried on a new connection)', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }, { sqlstate: null, socket_error: 'ECONNREFUSED' }],
    [{ code: 'ECONNRESET' }, { sqlstate: null, socket_error: 'ECONNRESET' }],
    [{ code: '08006' }, { sqlstate: '08006', socket_error: null }],
    [{ code: '57P03' }, { sqlstate: '57P03', socket_error: null }],
    [{ code: '57P01' }, { sqlstate: '57P01', socket_error: null }],
    [new Error('Connection terminated unexpectedly'), { sqlstate: null, socket_error: null }],
    [{ message: 'wrapped', driverError: { code: '08001' } }, { sqlstate: '08001', socket_error: null }],
  ])('%j is a connection failure', (error, codes) => {
    expect(classifyFailure(error)).toEqual({ connection: true, codes });
  });

  it.each([[{ code: '42501' }], [{ code: '28P01' }], [new TypeError('bug')], ['text'], [null]])('%j is not retried', (error) => {
    expect(classifyFailure(error).connection).toBe(false);
  });

  it('survives a cause cycle', () => {
    const error: { code: string; cause?: unknown } = { code: '42P01' };
    error.cause = error;
    expect(classifyFailure(error)).toEqual({ connection: false, codes: { sqlstate: '42P01', socket_error: null } });
  });
});

describe('isRolledBack (nothing was committed)', () => {
  it.each([[{ code: '40001' }], [{ code: '40P01' }], [{ code: '57014' }], [{ code: '57P01' }], [new Error('Connection terminated unexpectedly')], [{ code: 'ECONNRESET' }]])(
    '%j rolled back',
    (error) => {
      expect(isRolledBack(classifyFailure(error))).toBe(true);
    },
  );

  it.each([[{ code: '42P01' }], [{ code: '23505' }], ['text']])('%j did not', (error) => {
    expect(isRolledBack(classifyFailure(error))).toBe(false);
  });
});

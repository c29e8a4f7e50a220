import { classifyFailure } from './schema-validator';

describe('classifyFailure (what the validator retries)', () => {
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

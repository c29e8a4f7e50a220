import type { DataSource } from 'typeorm';
import { InvocationLedger } from './invocation-ledger';
import { LedgerError } from './ledger.errors';

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return LedgerError.isLedgerError(error) ? [error.code, error.details ?? null] : error;
  }
}

const notADataSource = {} as DataSource;

describe('InvocationLedger without a database', () => {
  it('start() rejects invalid options with invalid_ledger_options; construction never throws', async () => {
    const ledger = new InvocationLedger(notADataSource, { tableName: 'Bad', extra: 1 } as never);
    expect(await codeOf(ledger.start())).toEqual(['invalid_ledger_options', { fields: ['extra', 'tableName'] }]);
    expect(ledger.status()).toEqual({ state: 'new', lock_held: false });
    expect(ledger.instanceId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('start() rejects a value that is not an initialised Postgres DataSource', async () => {
    for (const dataSource of [notADataSource, null, { isInitialized: true, options: { type: 'mysql' } }]) {
      expect(await codeOf(new InvocationLedger(dataSource as DataSource).start())).toEqual([
        'invalid_ledger_options',
        { field: 'dataSource' },
      ]);
    }
  });

  it('every operation before start() is invalid_ledger_handle, checked before its arguments', async () => {
    const ledger = new InvocationLedger(notADataSource, { instanceId: 'unit-1', defaultLeaseMs: 1234 });
    expect(ledger.instanceId).toBe('unit-1');
    expect(() => ((ledger as { instanceId: string }).instanceId = 'other')).toThrow(TypeError);
    expect(ledger.defaultLeaseMs).toBe(1234);
    const calls = [
      ledger.create('', null as never, undefined),
      ledger.claim('', null as never),
      ledger.renew('x', 'bad', null as never),
      ledger.checkpoint('x', 'bad', undefined, null as never),
      ledger.finish('x', 'bad', 'nope' as never, undefined, undefined),
      ledger.delete(''),
      ledger.get(''),
    ];
    for (const call of calls) expect(await codeOf(call)).toEqual(['invalid_ledger_handle', null]);
    expect(await ledger.isHealthy()).toBe(false);
  });

  it('close() of a ledger never started is final and idempotent', async () => {
    const ledger = new InvocationLedger(notADataSource);
    await ledger.close();
    await ledger.close();
    expect(ledger.status().state).toBe('closed');
    expect(await codeOf(ledger.start())).toEqual(['invalid_ledger_handle', null]);
  });

  it('a failing telemetry sink never breaks the refusal it reports', async () => {
    const emit = jest.fn(() => {
      throw new Error('listener');
    });
    const ledger = new InvocationLedger(notADataSource, {}, { events: { emit } });
    expect(await codeOf(ledger.get('x'))).toEqual(['invalid_ledger_handle', null]);
    expect(emit).toHaveBeenCalledWith('agent_runtime.ledger.operation', { operation: 'get', outcome: 'invalid_ledger_handle', duration_ms: expect.any(Number), phase: null });
  });
});

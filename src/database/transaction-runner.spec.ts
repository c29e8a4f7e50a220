import { EventEmitter } from 'node:events';
import { JsonError } from '../json/json.errors';
import type { PgPool } from './postgres-pool';
import { runTransaction, runTransactionOn, type TransactionClient } from './transaction-runner';

type Answer = (text: string) => Promise<{ rows: Array<Record<string, unknown>> }>;

function fakePool(answer: Answer, connectError?: unknown) {
  const statements: string[] = [];
  const released: Array<boolean | Error | undefined> = [];
  const client = Object.assign(new EventEmitter(), {
    query: async (text: string) => {
      statements.push(text);
      return answer(text);
    },
    release: (destroy?: boolean | Error) => released.push(destroy),
  });
  const pool = Object.assign(new EventEmitter(), {
    options: {},
    Client: class {},
    connect: async () => {
      if (connectError) throw connectError;
      return client;
    },
  });
  return { pool: pool as unknown as PgPool, client, statements, released };
}

const ok: Answer = async () => ({ rows: [{ n: 1 }] });
const mapper = (failure: { connection: boolean; codes: object }, stage: string) => Object.assign(new Error(`mapped ${stage}`), { failure });
const sqlError = (code: string) => Object.assign(new Error('database text that must not leak'), { code });
const failingOn = (statement: string, error: unknown): Answer => async (text) => {
  if (text.startsWith(statement)) throw error;
  return { rows: [] };
};

describe('runTransaction', () => {
  it('runs BEGIN with the statement timeout in one round trip, the work, then COMMIT, and gives the connection back', async () => {
    const { pool, statements, released } = fakePool(ok);
    const value = await runTransaction(pool, async (client) => (await client.query('SELECT 1 AS n')).rows[0].n, mapper, { statementTimeoutMs: 2500 });
    expect(value).toBe(1);
    expect(statements).toEqual(['BEGIN; SET LOCAL statement_timeout = 2500', 'SELECT 1 AS n', 'COMMIT']);
    expect(released).toEqual([undefined]);
  });

  it('without a timeout only BEGIN opens the transaction', async () => {
    const { pool, statements } = fakePool(ok);
    await runTransaction(pool, async () => undefined, mapper);
    expect(statements).toEqual(['BEGIN', 'COMMIT']);
  });

  it('an error of this package thrown by the work rolls back and passes through unchanged', async () => {
    const { pool, statements, released } = fakePool(ok);
    const thrown = new JsonError('invalid_measure_limit');
    await expect(runTransaction(pool, async () => Promise.reject(thrown), mapper)).rejects.toBe(thrown);
    expect(statements).toEqual(['BEGIN', 'ROLLBACK']);
    expect(released).toEqual([undefined]);
  });

  it('a statement failure rolls back and is mapped by its codes only', async () => {
    const { pool, statements, released } = fakePool(failingOn('INSERT', sqlError('23505')));
    const error = await runTransaction(pool, (client) => client.query('INSERT x'), mapper).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'mapped statement', failure: { connection: false, codes: { sqlstate: '23505', socket_error: null } } });
    expect(statements).toEqual(['BEGIN', 'INSERT x', 'ROLLBACK']);
    expect(released).toEqual([undefined]);
  });

  it('a connection lost mid-transaction is destroyed without a rollback attempt', async () => {
    const { pool, statements, released } = fakePool(failingOn('SELECT', new Error('Connection terminated unexpectedly')));
    await expect(runTransaction(pool, (client) => client.query('SELECT 1'), mapper)).rejects.toMatchObject({ failure: { connection: true } });
    expect(statements).toEqual(['BEGIN', 'SELECT 1']);
    expect(released).toEqual([true]);
  });

  it('a connection whose rollback fails is destroyed', async () => {
    const answer: Answer = async (text) => {
      if (text === 'ROLLBACK' || text === 'UPDATE') throw sqlError('XX000');
      return { rows: [] };
    };
    const { pool, released } = fakePool(answer);
    await expect(runTransaction(pool, (client) => client.query('UPDATE'), mapper)).rejects.toMatchObject({ failure: { codes: { sqlstate: 'XX000' } } });
    expect(released).toEqual([true]);
  });

  it('a failing COMMIT is a mapped failure, and the transaction is rolled back', async () => {
    const { pool, statements } = fakePool(failingOn('COMMIT', sqlError('40001')));
    await expect(runTransaction(pool, async () => 'done', mapper)).rejects.toMatchObject({ message: 'mapped statement', failure: { codes: { sqlstate: '40001' } } });
    expect(statements).toEqual(['BEGIN', 'COMMIT', 'ROLLBACK']);
  });

  it('a failure to get a connection is mapped with stage connect and runs no work', async () => {
    const { pool, statements } = fakePool(ok, Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    let ran = false;
    const error = await runTransaction(pool, async () => (ran = true), mapper).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'mapped connect', failure: { codes: { socket_error: 'ECONNREFUSED' } } });
    expect(ran).toBe(false);
    expect(statements).toEqual([]);
  });

  it('guards the client against unheard error events while it is checked out', async () => {
    const { pool, client } = fakePool(ok);
    await runTransaction(pool, async () => {
      expect(() => client.emit('error', new Error('terminated'))).not.toThrow();
    }, mapper);
    expect(client.listenerCount('error')).toBe(1);
  });

  it('refuses a statement timeout that is not a positive safe integer before connecting', async () => {
    const { pool, statements } = fakePool(ok);
    for (const statementTimeoutMs of [0, -1, 1.5, Number.NaN]) {
      await expect(runTransaction(pool, async () => undefined, mapper, { statementTimeoutMs })).rejects.toThrow(TypeError);
    }
    expect(statements).toEqual([]);
  });
});

describe('runTransactionOn (a connection the caller holds)', () => {
  it('runs the same statements and never releases or closes the connection', async () => {
    const statements: string[] = [];
    const connection: TransactionClient = {
      query: async (text: string) => {
        statements.push(text);
        if (text === 'SELECT boom') throw sqlError('42501');
        return { rows: [] };
      },
    };
    expect(await runTransactionOn(connection, async () => 7, mapper, { statementTimeoutMs: 5 })).toBe(7);
    await expect(runTransactionOn(connection, (client) => client.query('SELECT boom'), mapper)).rejects.toMatchObject({ failure: { codes: { sqlstate: '42501' } } });
    expect(statements).toEqual(['BEGIN; SET LOCAL statement_timeout = 5', 'COMMIT', 'BEGIN', 'SELECT boom', 'ROLLBACK']);
  });
});

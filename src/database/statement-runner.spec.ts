import type { PgPool, PooledClient } from './postgres-pool';
import { runStatement } from './statement-runner';

function poolWith(query: PooledClient['query'], connectError?: unknown) {
  const released: Array<boolean | Error | undefined> = [];
  const pool = {
    options: {},
    Client: class {},
    on: () => undefined,
    connect: async () => {
      if (connectError) throw connectError;
      return { query, release: (destroy?: boolean | Error) => released.push(destroy), on: () => undefined };
    },
  } as unknown as PgPool;
  return { pool, released };
}

const mapper = (failure: { connection: boolean; codes: object }, stage: string) => Object.assign(new Error(`mapped ${stage}`), { failure });

describe('runStatement', () => {
  it('answers the rows and gives the connection back to the pool', async () => {
    const { pool, released } = poolWith(async () => ({ rows: [{ x: 1 }] }));
    expect(await runStatement(pool, 'SELECT 1 AS x', [], mapper)).toEqual([{ x: 1 }]);
    expect(released).toEqual([undefined]);
  });

  it('destroys a connection lost mid-statement and maps the failure by its codes only', async () => {
    const lost = poolWith(async () => Promise.reject(Object.assign(new Error('terminating connection; secret text'), { code: '57P01' })));
    const error = await runStatement(lost.pool, 'SELECT 1', [], mapper).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'mapped statement', failure: { connection: true, codes: { sqlstate: '57P01', socket_error: null } } });
    expect(lost.released).toEqual([true]);
    const plain = poolWith(async () => Promise.reject(Object.assign(new Error('syntax'), { code: '42601' })));
    await runStatement(plain.pool, 'SELEC', [], mapper).catch(() => undefined);
    expect(plain.released).toEqual([undefined]);
  });

  it('a connection lost while checked out cannot crash the process with an unheard error event', async () => {
    const { EventEmitter } = await import('node:events');
    let heard = 0;
    const client = Object.assign(new EventEmitter(), {
      query: async () => {
        heard = client.listenerCount('error');
        client.emit('error', new Error('Connection terminated unexpectedly'));
        throw new Error('Connection terminated unexpectedly');
      },
      release: () => undefined,
    });
    const pool = { options: {}, Client: class {}, on: () => undefined, connect: async () => client } as unknown as PgPool;
    await expect(runStatement(pool, 'SELECT 1', [], mapper)).rejects.toMatchObject({ failure: { connection: true } });
    expect(heard).toBe(1);
    await runStatement(pool, 'SELECT 1', [], mapper).catch(() => undefined);
    // one guard per client, however many statements it runs
    expect(client.listenerCount('error')).toBe(1);
  });

  it('guards every client the pool connects, before it is handed out, once per pool', async () => {
    const { EventEmitter } = await import('node:events');
    const pool = Object.assign(new EventEmitter(), { options: {}, Client: class {}, connect: async () => ({ query: async () => ({ rows: [] }), release: () => undefined, on: () => undefined }) });
    await runStatement(pool as unknown as PgPool, 'SELECT 1', [], mapper);
    await runStatement(pool as unknown as PgPool, 'SELECT 1', [], mapper);
    expect(pool.listenerCount('connect')).toBe(1);
    const fresh = new EventEmitter();
    pool.emit('connect', fresh);
    expect(() => fresh.emit('error', new Error('FATAL right after start-up'))).not.toThrow();
  });

  it('maps a failure to get a connection with stage connect', async () => {
    const { pool } = poolWith(async () => ({ rows: [] }), Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    await expect(runStatement(pool, 'SELECT 1', [], mapper)).rejects.toMatchObject({ message: 'mapped connect', failure: { codes: { socket_error: 'ECONNREFUSED' } } });
  });
});

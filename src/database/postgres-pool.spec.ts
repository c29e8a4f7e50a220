import { poolOf } from './postgres-pool';

describe('poolOf', () => {
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

import type { DedicatedClient, PgPool } from './postgres-pool';

/** Connect timeout of one attempt to open a dedicated connection (spec 04 §1.4). */
export const DEDICATED_CONNECT_TIMEOUT_MS = 2000;
/** First TCP keep-alive probe on an idle dedicated connection, unless the pool options set one. */
export const DEDICATED_KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/**
 * Opens connections outside the pool: a `pg.Client` of the pool's own class with the pool's
 * connection options (credentials, host, TLS, application name), TCP keep-alive on, and a 2000 ms
 * connect timeout. The pool can neither recycle nor share such a connection, which is what a
 * session-level advisory lock needs.
 */
export function dedicatedConnectionOpener(pool: PgPool): () => Promise<DedicatedClient> {
  return async () => {
    const client = new pool.Client(dedicatedConnectionConfig(pool));
    // an 'error' without a listener would crash the process; the owner watches it once connected
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  };
}

/** The `pg.Client` configuration of a dedicated connection of `pool` (see {@link dedicatedConnectionOpener}). */
export function dedicatedConnectionConfig(pool: PgPool): Record<string, unknown> {
  const options = pool.options;
  return {
    ...options,
    // the pool keeps the password as a non-enumerable property, which a spread drops
    password: options.password,
    keepAlive: true,
    keepAliveInitialDelayMillis: options.keepAliveInitialDelayMillis ?? DEDICATED_KEEPALIVE_INITIAL_DELAY_MS,
    connectionTimeoutMillis: DEDICATED_CONNECT_TIMEOUT_MS,
  };
}

import type { DataSource } from 'typeorm';

/** The rows of a statement, as node-postgres returns them. */
export type StatementRows = Array<Record<string, unknown>>;

/** A pooled client of node-postgres. */
export interface PooledClient {
  query(text: string, values?: unknown[]): Promise<{ rows: StatementRows }>;
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** A connection opened outside the pool (a `pg.Client`), as the instance lock holds one. */
export interface DedicatedClient {
  query(text: string, values?: unknown[]): Promise<{ rows: StatementRows }>;
  end(): Promise<void>;
  on(event: 'error' | 'end', listener: (...args: unknown[]) => void): unknown;
}

/** The node-postgres pool behind a TypeORM Postgres DataSource (`driver.master`). */
export interface PgPool {
  connect(): Promise<PooledClient>;
  /** `'connect'` fires for each new client, synchronously, before the client is handed out. */
  on(event: 'connect', listener: (client: PooledClient) => void): unknown;
  readonly options: Record<string, unknown>;
  readonly Client: new (config: Record<string, unknown>) => DedicatedClient & { connect(): Promise<void> };
}

/**
 * The pg pool of an initialised Postgres DataSource, or `null`. Components that issue one statement
 * per operation use it directly: such a statement needs no TypeORM query runner around it.
 */
export function poolOf(dataSource: unknown): PgPool | null {
  try {
    const source = dataSource as DataSource;
    if (!source?.isInitialized || source.options.type !== 'postgres') return null;
    const pool = (source.driver as unknown as { master?: PgPool }).master;
    return pool && typeof pool.connect === 'function' && typeof pool.Client === 'function' ? pool : null;
  } catch {
    return null;
  }
}

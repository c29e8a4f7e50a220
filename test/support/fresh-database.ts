import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { runAgentRuntimeMigrations } from '../../src/database/data-source.factory';

/** A database of its own for one test, on the test server, and how to get rid of it. */
export interface FreshDatabase {
  /** `postgres://` URL of the new database: the test server's credentials, host and port. */
  readonly url: string;
  /** Terminates every connection to the database and drops it; safe to call twice. */
  drop(): Promise<void>;
}

/** Options of {@link createFreshDatabase}. */
export interface FreshDatabaseOptions {
  /** Apply this package's migrations to the new database. @default true */
  migrate?: boolean;
}

/**
 * Creates `agent_runtime_t_<hex>` on the server at `process.env.DATABASE_URL` (set by the Jest
 * global setup: the embedded server or the caller's Postgres), optionally migrated. It is cloned
 * from `template0`, which never has sessions, so workers creating databases at the same time
 * cannot block one another on the template.
 */
export async function createFreshDatabase(options: FreshDatabaseOptions = {}): Promise<FreshDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL is not set: run the suite through the Jest global setup');
  const name = `agent_runtime_t_${randomBytes(8).toString('hex')}`;
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE template0`));
  const url = withDatabase(serverUrl, name);
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  try {
    if (options.migrate ?? true) await runAgentRuntimeMigrations(url);
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
  return { url, drop };
}

/** `url` with its database name replaced; user, password, host, port and query parameters are kept. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

async function onServer<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

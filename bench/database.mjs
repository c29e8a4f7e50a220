// The Postgres a benchmark runs on: DATABASE_URL when set, else a throw-away embedded server, and a
// database of the benchmark's own on it.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Client } = require('pg');
const { startThrowawayPostgres } = require('../dist/src/database/embedded/embedded-postgres.js');

/** Runs one statement on `url`; resolves its result. */
export async function onServer(url, sql) {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `DATABASE_URL`, or a throw-away embedded server (fsync off); `stop` ends what was started. */
export async function openServer() {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, source: 'DATABASE_URL', stop: async () => {} };
  const server = await startThrowawayPostgres();
  return { url: server.url, source: 'throw-away embedded server (fsync=off)', stop: () => server.stop() };
}

/** `url` with its database replaced by `name`. */
export function withDatabase(url, name) {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

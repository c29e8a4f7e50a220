import { runAgentRuntimeMigrations } from '../src/database/data-source.factory';
import { startThrowawayPostgres, type DatabaseHandle } from '../src/database/embedded-postgres';

declare global {
  // eslint-disable-next-line no-var
  var __agentRuntimeTestDatabase: DatabaseHandle | undefined;
}

/**
 * Gives every test worker a migrated, real Postgres at `process.env.DATABASE_URL`: the server the
 * caller named in `DATABASE_URL`, or a throw-away embedded one.
 */
export default async function globalSetup(): Promise<void> {
  if (!process.env.DATABASE_URL) {
    const database = await startThrowawayPostgres();
    globalThis.__agentRuntimeTestDatabase = database;
    process.env.DATABASE_URL = database.url;
  }
  await runAgentRuntimeMigrations(process.env.DATABASE_URL);
}

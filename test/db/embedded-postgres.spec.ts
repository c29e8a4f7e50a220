import { Client } from 'pg';
import { openProjectDatabase, startThrowawayPostgres } from '../../src/database/embedded/embedded-postgres';

async function version(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ version: string }>('SELECT version()')).rows[0].version;
  } finally {
    await client.end();
  }
}

describe('embedded Postgres launcher', () => {
  it('starts a real throw-away server on a free port and removes its data on stop', async () => {
    const database = await startThrowawayPostgres();
    try {
      expect(database.source).toBe('embedded-started');
      expect(await version(database.url)).toMatch(/^PostgreSQL \d+/);
    } finally {
      await database.stop();
    }
    await expect(version(database.url)).rejects.toThrow();
  }, 60_000);

  it('uses DATABASE_URL when it is set and never stops that server', async () => {
    const database = await openProjectDatabase({ DATABASE_URL: process.env.DATABASE_URL });
    expect(database.source).toBe('env');
    expect(database.url).toBe(process.env.DATABASE_URL);
    await database.stop();
    expect(await version(database.url)).toMatch(/^PostgreSQL/);
  });

  it('reuses the project server when one already answers on EMBEDDED_PG_PORT', async () => {
    const started = await startThrowawayPostgres();
    try {
      const port = new URL(started.url).port;
      const reused = await openProjectDatabase({ EMBEDDED_PG_PORT: port });
      expect(reused).toMatchObject({ source: 'embedded-running', url: started.url });
      await reused.stop();
      expect(await version(started.url)).toMatch(/^PostgreSQL/);
    } finally {
      await started.stop();
    }
  }, 60_000);
});

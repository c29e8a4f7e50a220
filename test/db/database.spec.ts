import { Client } from 'pg';
import { AGENT_RUNTIME_MIGRATIONS_TABLE as MIGRATIONS_TABLE } from '../../src/database/migration-groups';

describe('test database', () => {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  beforeAll(() => client.connect());
  afterAll(() => client.end());

  it('is a real PostgreSQL server', async () => {
    const { rows } = await client.query<{ version: string }>('SELECT version()');
    expect(rows[0].version).toMatch(/^PostgreSQL \d+/);
  });

  it('has the migrations applied by the global setup', async () => {
    const { rows } = await client.query<{ name: string | null }>('SELECT to_regclass($1)::text AS name', [MIGRATIONS_TABLE]);
    expect(rows[0].name).toBe(MIGRATIONS_TABLE);
  });
});

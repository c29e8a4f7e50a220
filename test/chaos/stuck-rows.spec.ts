import { Client } from 'pg';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { surveyRows } from './support/stuck-rows';

/** The chaos suite's row survey finds what it must find: it is what "no row stuck" rests on. */
describe('chaos row survey', () => {
  let database: FreshDatabase;
  let client: Client;

  beforeAll(async () => {
    database = await createFreshDatabase();
    client = new Client({ connectionString: database.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  test('a migrated, empty database has nothing stuck and every column looking like ownership has a rule', async () => {
    const survey = await surveyRows(database.url);
    expect(survey.stuck).toEqual([]);
    expect(survey.unknownColumns).toEqual([]);
    expect(survey.tables).toEqual(
      expect.arrayContaining(['agent_runtime_invocations', 'agent_runtime_runs', 'agent_runtime_eval_jobs', 'agent_runtime_memory_outbox_jobs', 'agent_runtime_admission_permits', 'agent_runtime_admission_queue']),
    );
  });

  test('names running and ready ledger rows, owned unfinished runs and held permits, and leaves finished and paused rows alone', async () => {
    await client.query(`INSERT INTO agent_runtime_invocations (id, workflow_id, workflow_version, kind, checkpoint, phase, owner_token, owner_instance, lease_until_ms, revision, created_at_ms, updated_at_ms) VALUES
      ('i-running', 'w', '1', 'agent_run', 'null', 'running', gen_random_uuid(), 'host-1', 99, 1, 0, 0),
      ('i-ready', 'w', '1', 'agent_run', 'null', 'ready', NULL, NULL, 0, 0, 0, 0),
      ('i-paused', 'w', '1', 'agent_run', 'null', 'paused', NULL, NULL, 0, 1, 0, 0),
      ('i-done', 'w', '1', 'agent_run', 'null', 'completed', NULL, NULL, 0, 2, 0, 0)`);
    await client.query(`INSERT INTO agent_runtime_runs (run_id, agent, user_id, session_id, status, owner_instance, durable, created_at_ms, updated_at_ms) VALUES
      ('r-pending', 'helper', 'u', 's', 'pending', 'host-2', true, 0, 0),
      ('r-paused', 'helper', 'u', 's', 'paused', 'host-2', true, 0, 0),
      ('r-done', 'helper', 'u', 's', 'completed', 'host-2', true, 0, 0)`);
    await client.query(`INSERT INTO agent_runtime_admission_permits (permit_id, request_id, agent_id, instance_id) VALUES ('p1', 'q1', 'a', 'host-3')`);
    const survey = await surveyRows(database.url);
    expect(survey.stuck).toEqual(
      expect.arrayContaining([
        { table: 'agent_runtime_invocations', what: 'phase ready', count: 1, holders: [] },
        { table: 'agent_runtime_invocations', what: 'phase running', count: 1, holders: ['host-1'] },
        { table: 'agent_runtime_runs', what: 'owned (owner_instance set) while status pending', count: 1, holders: ['host-2'] },
        { table: 'agent_runtime_admission_permits', what: 'held (instance_id set)', count: 1, holders: ['host-3'] },
      ]),
    );
    expect(survey.stuck).toHaveLength(4);
    expect(survey.unfinished).toEqual(
      expect.arrayContaining([
        { table: 'agent_runtime_invocations', state: 'paused', count: 1 },
        { table: 'agent_runtime_runs', state: 'paused', count: 1 },
      ]),
    );
  });
});

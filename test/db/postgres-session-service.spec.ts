import type { MigrationInterface } from 'typeorm';
import { Client } from 'pg';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { RunnerSessions1764700000000 } from '../../migrations/1764700000000-runner-sessions';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { validateSchema } from '../../src/database/schema/schema-validator';
import { PostgresSessionService, type PostgresSessionServiceOptions } from '../../src/services/sessions/postgres-session-service';
import { RunnerError } from '../../src/runner/runner.errors';
import { SESSION_EVENT_TABLE_SPEC, SESSION_TABLE_SPEC } from '../../src/services/sessions/session.schema';
import type { NewSessionEvent } from '../../src/runner/session.types';
import { randomId } from '../../src/shared/ids/random-id';
import { thrown } from '../../src/shared/testing/thrown';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { startTcpProxy } from '../support/tcp-proxy';
import { describeSessionServiceContract, runnerError } from '../../src/services/sessions/testing/session-service-contract';

const SESSIONS = 'agent_runtime_sessions';
/** Prefix of every app name this run writes to the shared database, whose rows are removed afterwards. */
const APP = `session-spec-${randomId('').replace(/[-_]/g, 'x')}`;
const appOfTest = () => `${APP}-${randomId('')}`;
const EVENTS = 'agent_runtime_session_events';

const dataSources: DataSource[] = [];
const services: PostgresSessionService[] = [];

async function openDataSource(url = process.env.DATABASE_URL as string, overrides: Partial<DataSourceOptions> = {}, registry = dataSources): Promise<DataSource> {
  const dataSource = createAgentRuntimeDataSource(url, overrides);
  registry.push(dataSource);
  return dataSource.initialize();
}

function service(dataSource: DataSource, options?: PostgresSessionServiceOptions): PostgresSessionService {
  const created = new PostgresSessionService(dataSource, options);
  services.push(created);
  return created;
}

async function started(dataSource: DataSource, options?: PostgresSessionServiceOptions): Promise<PostgresSessionService> {
  const created = service(dataSource, options);
  await created.start();
  return created;
}

const event = (overrides: Partial<NewSessionEvent> = {}): NewSessionEvent => ({
  event_id: randomId('evt-'),
  invocation_id: 'inv-1',
  author: 'user',
  kind: 'user_message',
  content: { role: 'user', parts: [{ text: 'hello' }] },
  ...overrides,
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  const cleanup = await openDataSource();
  await cleanup.query(`DELETE FROM ${SESSIONS} WHERE app_name LIKE $1`, [`${APP}-%`]);
  await Promise.all(dataSources.splice(0).map((d) => (d.isInitialized ? d.destroy().catch(() => undefined) : undefined)));
});

let shared: DataSource | undefined;
describeSessionServiceContract('PostgresSessionService', async (clock) => {
  shared ??= await openDataSource();
  return started(shared, { clock });
}, { appPrefix: APP });

describe('PostgresSessionService on the migrated database', () => {
  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = await openDataSource(undefined, { extra: { max: 20 } });
  });

  it('the migration creates exactly what SESSION_TABLE_SPEC and SESSION_EVENT_TABLE_SPEC declare', async () => {
    expect(await validateSchema(dataSource, [SESSION_TABLE_SPEC, SESSION_EVENT_TABLE_SPEC])).toEqual({ ok: true, mismatches: [] });
  });

  it('16 concurrent appends from two instances to one session get seq 1..16, no gap, no duplicate', async () => {
    const other = await started(await openDataSource(undefined, { extra: { max: 20 } }));
    const one = await started(dataSource);
    const appName = appOfTest();
    const record = await one.createSession({ appName, userId: 'u1' });
    const ref = { appName, userId: 'u1', sessionId: record.session_id };
    const appended = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? one : other).appendEvent(ref, event())));
    expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    const listed = await other.listEvents(ref);
    expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(new Set(listed.map((e) => e.event_id))).toEqual(new Set(appended.map((e) => e.event_id)));
    expect((await one.getSession(ref))?.last_seq).toBe(16);
  });

  it('of 8 concurrent updates expecting the same version exactly one applies; the others get session_state_conflict', async () => {
    const sessions = await started(dataSource);
    const appName = appOfTest();
    const record = await sessions.createSession({ appName, userId: 'u1' });
    const ref = { appName, userId: 'u1', sessionId: record.session_id };
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => sessions.updateState(ref, { winner: i }, { expectedVersion: 0 })));
    const applied = outcomes.filter((o) => o.status === 'fulfilled');
    expect(applied).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'session_state_conflict' });
    expect(await sessions.getSession(ref)).toMatchObject({ state_version: 1, state: (applied[0] as PromiseFulfilledResult<{ state: object }>).value.state });
  });

  it('refuses operations before start and after close with session_store_failed naming the operation', async () => {
    const sessions = service(dataSource);
    const ref = { appName: appOfTest(), userId: 'u1', sessionId: 'sid-1' };
    await runnerError(sessions.getSession(ref), 'session_store_failed', { operation: 'get_session', reason: 'not_started' });
    await sessions.start();
    await sessions.close();
    await runnerError(sessions.appendEvent(ref, event()), 'session_store_failed', { operation: 'append_event', reason: 'closed' });
    await runnerError(sessions.start(), 'session_store_failed', { operation: 'start', reason: 'closed' });
  });

  it('close waits for operations in flight', async () => {
    const sessions = await started(dataSource);
    const ref = { appName: appOfTest(), userId: 'u1', sessionId: `sid-${randomId('')}` };
    const creating = sessions.createSession(ref);
    await sessions.close();
    expect(await (await started(dataSource)).getSession(ref)).toBeDefined();
    await creating;
  });

  it('refuses a DataSource that is not initialised with invalid_runner_options, and bad options at construction', async () => {
    const idle = createAgentRuntimeDataSource(process.env.DATABASE_URL as string);
    await runnerError(service(idle).start(), 'invalid_runner_options', { field: 'dataSource' });
    expect(thrown(() => new PostgresSessionService(dataSource, { schema: 'Bad-Name' }), RunnerError)).toMatchObject({
      code: 'invalid_runner_options',
      details: { field: 'schema' },
    });
    expect(thrown(() => new PostgresSessionService(dataSource, { tableName: 'x' } as never), RunnerError)).toMatchObject({ details: { field: 'tableName' } });
  });
});

describe('PostgresSessionService on a database of its own', () => {
  let database: FreshDatabase;
  let admin: Client;
  const own: DataSource[] = [];
  const openOwn = (url: string, overrides: Partial<DataSourceOptions> = {}) => openDataSource(url, overrides, own);
  beforeEach(async () => {
    database = await createFreshDatabase();
    admin = new Client({ connectionString: database.url });
    admin.on('error', () => undefined);
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
    await Promise.all(own.splice(0).map((d) => (d.isInitialized ? d.destroy().catch(() => undefined) : undefined)));
    await admin.end().catch(() => undefined);
    await database.drop();
  });

  it('refuses start with schema_mismatch listing every difference, and starts once the schema is fixed', async () => {
    await admin.query(`ALTER TABLE ${SESSIONS} ALTER COLUMN state_version TYPE integer`);
    await admin.query(`ALTER TABLE ${EVENTS} DROP COLUMN author`);
    await admin.query(`ALTER TABLE ${EVENTS} DROP CONSTRAINT ${EVENTS}_session_id_fkey`);
    const sessions = service(await openOwn(database.url));
    const error = await runnerError(sessions.start(), 'schema_mismatch');
    expect(error.details?.mismatches).toEqual([
      { table: SESSIONS, property: 'column:state_version', expected: 'bigint not null default 0', actual: 'integer not null default 0' },
      { table: EVENTS, property: 'column:author', expected: 'text not null', actual: 'missing' },
      {
        table: EVENTS,
        property: `foreign_key:${EVENTS}_session_id_fkey`,
        expected: `(session_id) references ${SESSIONS} (session_id) on delete cascade`,
        actual: 'missing',
      },
    ]);
    await admin.query(`ALTER TABLE ${SESSIONS} ALTER COLUMN state_version TYPE bigint`);
    await admin.query(`ALTER TABLE ${EVENTS} ADD COLUMN author text NOT NULL`);
    await admin.query(
      `ALTER TABLE ${EVENTS} ADD CONSTRAINT ${EVENTS}_session_id_fkey FOREIGN KEY (session_id) REFERENCES ${SESSIONS} (session_id) ON DELETE CASCADE`,
    );
    await sessions.start();
    expect((await sessions.createSession({ appName: 'app', userId: 'u1' })).state_version).toBe(0);
  });

  it('the database itself refuses an unknown kind and removes the events with their session', async () => {
    await admin.query(`INSERT INTO ${SESSIONS} (session_id, app_name, user_id, state, created_at_ms, updated_at_ms) VALUES ('s', 'a', 'u', '{}', 1, 1)`);
    const insert = (kind: string, seq: number) =>
      admin.query(`INSERT INTO ${EVENTS} (session_id, seq, event_id, invocation_id, author, kind, content, created_at_ms) VALUES ('s', $1, $2, 'i', 'user', $3, 'null', 1)`, [
        seq,
        `e${seq}`,
        kind,
      ]);
    await expect(insert('chat', 1)).rejects.toMatchObject({ code: '23514', constraint: `${EVENTS}_kind_check` });
    await insert('policy_audit', 1);
    await admin.query(`DELETE FROM ${SESSIONS} WHERE session_id = 's'`);
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${EVENTS}`)).rows).toEqual([{ n: 0 }]);
  });

  it('the schema option finds both tables in another Postgres schema and writes there', async () => {
    await admin.query('CREATE SCHEMA tenant_a');
    const dataSource = await openOwn(database.url);
    const runner = dataSource.createQueryRunner();
    await runner.query('SET search_path = tenant_a');
    await (new RunnerSessions1764700000000() as MigrationInterface).up(runner);
    await runner.query('SET search_path = DEFAULT');
    await runner.release();
    const sessions = await started(dataSource, { schema: 'tenant_a' });
    const record = await sessions.createSession({ appName: 'app', userId: 'u1' });
    await sessions.appendEvent({ appName: 'app', userId: 'u1', sessionId: record.session_id }, event());
    expect((await admin.query(`SELECT session_id FROM tenant_a.${SESSIONS}`)).rows).toEqual([{ session_id: record.session_id }]);
    expect((await admin.query(`SELECT count(*)::int AS n FROM tenant_a.${EVENTS}`)).rows).toEqual([{ n: 1 }]);
    expect((await admin.query(`SELECT count(*)::int AS n FROM public.${SESSIONS}`)).rows).toEqual([{ n: 0 }]);
    const error = await runnerError(service(dataSource, { schema: 'tenant_b' }).start(), 'schema_mismatch');
    expect(error.details?.mismatches).toEqual([
      { table: SESSIONS, property: 'table', expected: 'present', actual: 'missing' },
      { table: EVENTS, property: 'table', expected: 'present', actual: 'missing' },
    ]);
  });

  it('a cut connection gives session_store_failed naming the operation, not a crash, and the service serves again once the database is back', async () => {
    const proxy = await startTcpProxy(database.url);
    const sessions = await started(await openOwn(proxy.url, { extra: { max: 2 } }));
    const record = await sessions.createSession({ appName: 'app', userId: 'u1' });
    const ref = { appName: 'app', userId: 'u1', sessionId: record.session_id };
    await sessions.appendEvent(ref, event());
    await proxy.sever();
    for (const [operation, call] of [
      ['get_session', () => sessions.getSession(ref)],
      ['append_event', () => sessions.appendEvent(ref, event())],
      ['list_events', () => sessions.listEvents(ref)],
      ['update_state', () => sessions.updateState(ref, { a: 1 })],
      ['list_sessions', () => sessions.listSessions({ appName: 'app', userId: 'u1' })],
      ['delete_session', () => sessions.deleteSession(ref)],
      ['create_session', () => sessions.createSession({ appName: 'app', userId: 'u1' })],
    ] as const) {
      const error = await runnerError(call(), 'session_store_failed');
      expect(error.details).toMatchObject({ operation });
      expect(Object.keys(error.details ?? {}).sort()).toEqual(['operation', 'socket_error', 'sqlstate']);
    }
    const direct = await started(await openOwn(database.url));
    expect(await direct.listEvents(ref)).toHaveLength(1);
    expect((await direct.getSession(ref))?.last_seq).toBe(1);
  });

  it('an unreachable database fails start with session_store_failed after the validator retries', async () => {
    const proxy = await startTcpProxy(database.url);
    const dataSource = await openOwn(proxy.url);
    await proxy.sever();
    const error = await runnerError(service(dataSource).start(), 'session_store_failed');
    expect(error.details).toMatchObject({ operation: 'start', attempts: 3, socket_error: 'ECONNREFUSED' });
  });
});

import { Client } from 'pg';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { RecordingLogger } from './support/harness';
import { AS_ALICE, startReferenceService, type ReferenceService } from './support/reference-service';
import { SseConnection } from './support/sse-client';
import { eventually } from '../support/eventually';

/**
 * Issue 23 item 6: the reference service keeps its runs in Postgres in the default mode too, so a
 * durable run paused before a restart is read, followed and confirmed after it, on the same database
 * by a new app, and completes without re-running a step.
 */
describe('reference service: a durable run paused before a restart (default mode)', () => {
  let database: FreshDatabase;
  let admin: Client;
  const services: ReferenceService[] = [];

  beforeAll(async () => {
    database = await createFreshDatabase();
    admin = new Client({ connectionString: database.url });
    await admin.connect();
  }, 60_000);
  afterAll(async () => {
    for (const service of services) await service.app.close().catch(() => undefined);
    await admin?.end();
    await database?.drop();
  });

  const start = async () => {
    const service = await startReferenceService({ databaseUrl: database.url }, new RecordingLogger());
    services.push(service);
    return service;
  };

  test('is confirmed by the next app and completes; every tool step ran once; the ledger row completes', async () => {
    const first = await start();
    const started = await first.http.send('/runs', { method: 'POST', body: { agent: 'operator', message: 'Clear the cache and deploy the api', durable: true } }).result;
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    const sessionId = started.body.session_id as string;
    await eventually(async () => (await first.http.send(`/runs/${runId}`).result).body.status === 'paused', 10_000, 'the run pauses');
    const before = (await first.http.send(`/runs/${runId}`).result).body;
    expect(before).toMatchObject({ status: 'paused', pending_call_ids: ['deploy-1'], last_seq: 6 });
    const invocationId = before.invocation_id as string;
    await first.app.close();

    const second = await start();
    const base = second.http.baseUrl;
    expect((await second.http.send(`/runs/${runId}`).result).body).toEqual(before);
    // followed from the start: the items written before the restart are there
    const replay = await SseConnection.open(base, `/runs/${runId}/events`, AS_ALICE);
    const paused = await replay.waitForMessages(6);
    replay.close();
    expect(paused.map((message) => message.event)).toEqual(['event', 'event', 'event', 'event', 'event', 'paused']);

    const confirmed = await second.http.send(`/runs/${runId}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: true } }).result;
    expect(confirmed.status).toBe(202);
    const rest = await SseConnection.open(base, `/runs/${runId}/events`, { ...AS_ALICE, 'Last-Event-ID': '6' });
    await rest.ended;
    const items = rest.messages.map((message) => JSON.parse(message.data));
    expect(items.map((item) => item.type)).toEqual(['resumed', 'event', 'event', 'terminal']);
    expect(items[1].event.content).toMatchObject({ call_id: 'deploy-1', response: { success: true, result: { deployed: 'api' } } });
    expect(items[3]).toEqual({ seq: 10, type: 'terminal', status: 'completed' });

    // each tool step once in the session: the refused shell call before the restart, the deploy after it
    const responses = await admin.query<{ call_id: string; n: number }>(
      `SELECT content->>'call_id' AS call_id, count(*)::int AS n FROM agent_runtime_session_events WHERE session_id = $1 AND kind = 'tool_response' GROUP BY 1 ORDER BY 1`,
      [sessionId],
    );
    expect(responses.rows).toEqual([
      { call_id: 'deploy-1', n: 1 },
      { call_id: 'shell-1', n: 1 },
    ]);
    const ledger = await admin.query('SELECT phase FROM agent_runtime_invocations WHERE id = $1', [invocationId]);
    expect(ledger.rows).toEqual([{ phase: 'completed' }]);
    const stuck = await admin.query(`SELECT count(*)::int AS n FROM agent_runtime_runs WHERE status IN ('pending', 'running')`);
    expect(stuck.rows).toEqual([{ n: 0 }]);
  }, 60_000);
});

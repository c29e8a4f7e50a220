import { DataSource } from 'typeorm';
import { RecordingLogger } from './support/harness';
import { useReferenceService } from './support/reference-service';

/** The reference service `npm start` runs, on a fresh migrated database, driven as the README shows. */
describe('reference service (README walkthrough)', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);

  const post = (path: string, body: unknown) => service.http.send(path, { method: 'POST', body }).result;
  const get = (path: string) => service.http.send(path).result;

  it('admits an invoke, records it in the ledger and serves the public record without the token', async () => {
    const invoked = await post('/agents/a/invoke', { work_ms: 10 });
    expect(invoked.status).toBe(200);
    expect(invoked.body).toMatchObject({ agent_id: 'a', work_ms: 10, completed: true });
    const record = await get(`/invocations/${invoked.body.invocation_id}`);
    expect(record.status).toBe(200);
    expect(Object.keys(record.body).sort()).toEqual(
      ['checkpoint', 'created_at_ms', 'invocation_id', 'kind', 'lease_until_ms', 'outcome', 'owned', 'owner_instance', 'phase', 'revision', 'updated_at_ms', 'workflow_id', 'workflow_version'].sort(),
    );
    expect(record.body).toMatchObject({ workflow_id: 'a', kind: 'agent_run', phase: 'completed', owned: false, outcome: { work_ms: 10 } });
    expect(record.text).not.toMatch(/token/i);
    const [row] = await service.app.get(DataSource).query('SELECT owner_token FROM agent_runtime_invocations WHERE id = $1', [invoked.body.invocation_id]);
    expect(row).toEqual({ owner_token: null });
  });

  it('records an invoke whose client went away as cancelled, client_disconnected, with its lease released', async () => {
    const dataSource = service.app.get(DataSource);
    const call = service.http.send('/agents/gone/invoke', { method: 'POST', body: { work_ms: 5_000 } });
    const running = async () => (await dataSource.query(`SELECT id FROM agent_runtime_invocations WHERE workflow_id = 'gone'`)) as unknown[];
    for (let i = 0; i < 100 && (await running()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    call.abort();
    const finished = async () =>
      (await dataSource.query(
        `SELECT phase, outcome, owner_token, lease_until_ms FROM agent_runtime_invocations WHERE workflow_id = 'gone' AND phase <> 'running'`,
      )) as unknown[];
    for (let i = 0; i < 100 && (await finished()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await finished()).toEqual([{ phase: 'cancelled', outcome: { reason: 'client_disconnected' }, owner_token: null, lease_until_ms: '0' }]);
  });

  it('answers 404 with a code for an unknown invocation', async () => {
    const missing = await get('/invocations/no-such-invocation');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status_code: 404, error: 'Not Found', code: 'not_found' });
  });

  it('queues the third concurrent call of one agent (limit 2) and serves it in turn', async () => {
    const calls = [1, 2, 3].map(() => post('/agents/b/invoke', { work_ms: 300 }));
    const status = await waitForQueued('b');
    expect(status).toMatchObject({ global_limit: 4, overflow: 'queue', per_agent: { b: { active: 2, queued: 1, limit: 2 } } });
    const results = await Promise.all(calls);
    expect(results.map((result) => result.status)).toEqual([200, 200, 200]);
    expect((await get('/admission/status')).body).toMatchObject({ active: 0, queue_length: 0 });
  });

  it('reports readiness of admission, database and ledger, and liveness', async () => {
    const ready = await get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.info).toMatchObject({ admission: { status: 'up' }, database: { status: 'up' }, invocation_ledger: { status: 'up', lock_held: true } });
    expect((await get('/health/live')).body).toEqual({ status: 'ok' });
  });

  it('denies the shell tool and a stranger agent, never echoing the request, and audits the denials', async () => {
    const canary = 'canary-7f3a-secret';
    const shell = await post('/tools/shell', { cmd: canary });
    expect(shell.status).toBe(403);
    expect(shell.body).toMatchObject({ code: 'runtime_policy_denied', decision: { operation: 'tool_call', outcome: 'deny', reason: 'explicitly_denied' } });
    const stranger = await post('/chat/stranger', { prompt: canary });
    expect(stranger.body).toMatchObject({ code: 'runtime_policy_denied', decision: { reason: 'not_allowed' } });
    const oversized = await post('/tools/search', { query: 'weather', results: 500 });
    expect(oversized.status).toBe(413);
    expect(oversized.text).not.toContain('result 1 for the query');
    expect([shell.text, stranger.text]).not.toContainEqual(expect.stringContaining(canary));
    const verified = await get('/policy/audit/verify');
    expect(verified.body).toMatchObject({ ok: true, rows_checked: 3, first_broken: null });
    expect(logger.entries.map((entry) => entry.text).join('\n')).not.toContain(canary);
  });

  it('lets allowed agent and tool calls through', async () => {
    expect((await post('/chat/helper', { prompt: 'hello' })).body).toEqual({ agent: 'helper', reply: 'helper read 5 characters' });
    expect((await post('/tools/search', { query: 'weather' })).body.hits).toHaveLength(3);
  });

  async function waitForQueued(agent: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const status = (await get('/admission/status')).body;
      if (status.per_agent?.[agent]?.queued === 1 || Date.now() > deadline) return status;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
});

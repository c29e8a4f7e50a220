/**
 * Runs of the reference service in cluster mode across separate processes (spec 08 §4, §6): a stream
 * started on A is followed on B with `Last-Event-ID`, a paused run is cancelled or confirmed on the
 * other instance, also after every instance restarted.
 */
import { Client } from 'pg';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { eventually } from '../support/eventually';
import { SseConnection } from '../e2e/support/sse-client';
import { AS_ALICE } from '../e2e/support/reference-service';
import { startClusterNode, type ClusterNode } from './support/cluster-node';

describe('cluster mode: runs across instances in separate processes (spec 08 §4)', () => {
  let database: FreshDatabase;
  const nodes: ClusterNode[] = [];
  const node = async (id: string) => {
    const started = await startClusterNode(database.url, id);
    nodes.push(started);
    return started;
  };

  beforeAll(async () => {
    database = await createFreshDatabase();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((each) => each.kill().catch(() => undefined)));
    await database?.drop();
  });

  const startRun = async (on: ClusterNode, agent: string, durable = false) => {
    const answer = await on.http.send('/runs', { method: 'POST', body: { agent, message: 'Where is the runbook?', ...(durable ? { durable: true } : {}) } }).result;
    expect(answer.status).toBe(202);
    return answer.body.run_id as string;
  };

  it('a stream started on A, read in part there and then on B with Last-Event-ID, is complete, ordered and without a duplicate', async () => {
    const [a, b] = await Promise.all([node('runs-a'), node('runs-b')]);
    const runId = await startRun(a, 'helper');
    const onA = await SseConnection.open(a.http.baseUrl, `/runs/${runId}/events`, AS_ALICE);
    const firstTwo = await onA.waitForMessages(2);
    onA.close();
    const onB = await SseConnection.open(b.http.baseUrl, `/runs/${runId}/events`, { ...AS_ALICE, 'last-event-id': firstTwo[1].id as string });
    await onB.ended;
    const seqs = [...firstTwo, ...onB.messages].map((message) => Number(message.id));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(onB.messages.at(-1)?.event).toBe('terminal');
    expect(JSON.parse(onB.messages.at(-1)?.data as string)).toMatchObject({ type: 'terminal', status: 'completed' });
    const full = await SseConnection.open(b.http.baseUrl, `/runs/${runId}/events`, AS_ALICE);
    await full.ended;
    expect(full.messages.map((message) => Number(message.id))).toEqual(seqs);
  }, 60_000);

  it('a run paused on A is cancelled by a POST to B', async () => {
    const [a, b] = [nodes[0], nodes[1]];
    const runId = await startRun(a, 'operator');
    await eventually(async () => (await b.http.send(`/runs/${runId}`).result).body.status === 'paused', 10_000, 'the pause');
    const cancelled = await b.http.send(`/runs/${runId}/cancel`, { method: 'POST', body: { reason: 'operator_said_no' } }).result;
    expect(cancelled.status).toBe(202);
    expect(cancelled.body.status).toBe('cancelled');
    expect((await a.http.send(`/runs/${runId}`).result).body).toMatchObject({ status: 'cancelled' });
  }, 60_000);

  it('a durable run paused on A is confirmed on B after both instances restarted, and ends completed', async () => {
    const [a, b] = [nodes[0], nodes[1]];
    const runId = await startRun(a, 'operator', true);
    await eventually(async () => (await a.http.send(`/runs/${runId}`).result).body.status === 'paused', 10_000, 'the pause');
    expect([await a.stop(), await b.stop()]).toEqual([0, 0]);
    const [a2, b2] = await Promise.all([node('runs-a2'), node('runs-b2')]);
    expect((await a2.http.send(`/runs/${runId}`).result).body.status).toBe('paused');
    const confirmed = await b2.http.send(`/runs/${runId}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: true } }).result;
    expect(confirmed.status).toBe(202);
    const stream = await SseConnection.open(a2.http.baseUrl, `/runs/${runId}/events`, AS_ALICE);
    await stream.ended;
    const types = stream.messages.map((message) => message.event);
    expect(types).toContain('paused');
    expect(types).toContain('resumed');
    expect(types.at(-1)).toBe('terminal');
    expect(JSON.parse(stream.messages.at(-1)?.data as string)).toMatchObject({ status: 'completed' });
  }, 90_000);

  it('kill -9 of A during a durable run: B takes it over from the ledger checkpoint, never re-runs a completed step, and the stream reaches its terminal item', async () => {
    // only these two instances are live, so the takeover can only be B's
    await Promise.all(nodes.splice(0).map((earlier) => earlier.stop()));
    const [a, b] = await Promise.all([node('durable-a'), node('durable-b')]);
    const runId = await startRun(a, 'batch', true);
    const onB = await SseConnection.open(b.http.baseUrl, `/runs/${runId}/events`, AS_ALICE);
    // the first step's response is stored; the second step is running on A
    await onB.waitUntil(() => onB.items().some((item) => item.event?.kind === 'tool_response' && item.event.content.call_id === 'wait-1'), 15_000, 'step 1');
    await a.kill();
    await onB.ended;
    const terminal = onB.items().at(-1);
    expect(terminal).toMatchObject({ type: 'terminal', status: 'completed' });
    const seqs = onB.items().map((item) => item.seq);
    expect(new Set(seqs).size).toBe(seqs.length);

    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `SELECT content->>'call_id' AS call_id, count(*)::int AS n FROM agent_runtime_session_events e JOIN agent_runtime_runs r ON r.session_id = e.session_id
          WHERE r.run_id = $1 AND e.kind = 'tool_response' GROUP BY 1 ORDER BY 1`,
        [runId],
      );
      expect(rows).toEqual([
        { call_id: 'wait-1', n: 1 },
        { call_id: 'wait-2', n: 1 },
        { call_id: 'wait-3', n: 1 },
      ]);
      const [run] = (await admin.query('SELECT owner_instance, status FROM agent_runtime_runs WHERE run_id = $1', [runId])).rows;
      expect(run).toEqual({ owner_instance: 'durable-b', status: 'completed' });
    } finally {
      await admin.end();
    }
  }, 90_000);
});

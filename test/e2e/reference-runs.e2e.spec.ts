import { eventually } from '../support/eventually';
import { RecordingLogger } from './support/harness';
import { AS_ALICE, useReferenceService } from './support/reference-service';
import { SseConnection } from './support/sse-client';

/**
 * The README's walk-through ("A run from the command line") against the reference service: the same
 * HTTP calls the `curl` commands make, in the same order, with the answers the README shows.
 */
describe('README walk-through: a run of the operator agent over HTTP and SSE', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);
  const base = () => service.http.baseUrl;

  test('start, follow, approve the pending confirmation, see the terminal item', async () => {
    const started = await service.http.send('/runs', { method: 'POST', body: { agent: 'operator', message: 'Clear the cache and deploy the api' } }).result;
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ run_id: expect.stringMatching(/^run-[A-Za-z0-9_-]{24}$/), session_id: expect.stringMatching(/^ses-/) });
    const runId = started.body.run_id as string;

    const first = await SseConnection.open(base(), `/runs/${runId}/events`, AS_ALICE);
    const beforePause = await first.waitForMessages(6);
    first.close();
    expect(beforePause.map((message) => [message.id, message.event])).toEqual([
      ['1', 'event'],
      ['2', 'event'],
      ['3', 'event'],
      ['4', 'event'],
      ['5', 'event'],
      ['6', 'paused'],
    ]);
    const items = beforePause.map((message) => JSON.parse(message.data));
    expect(items.slice(0, 5).map((item) => item.event.kind)).toEqual(['user_message', 'model_turn', 'policy_audit', 'tool_response', 'confirmation_requested']);
    expect(items[2].event.actions.runtime_policy_decision).toMatchObject({ subject: 'shell', outcome: 'deny', reason: 'explicitly_denied' });
    expect(items[3].event.content).toMatchObject({ call_id: 'shell-1', response: { success: false, error: { kind: 'runtime_policy_denied', reason: 'explicitly_denied' } } });
    expect(items[4].event.content).toMatchObject({ call_id: 'deploy-1', tool: 'deploy', hint: 'Deploys to production.' });
    expect(items[5]).toEqual({ seq: 6, type: 'paused', pending_call_ids: ['deploy-1'] });

    const confirmed = await service.http.send(`/runs/${runId}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: true } }).result;
    expect(confirmed.status).toBe(202);
    expect(confirmed.body).toMatchObject({ schema_version: 1, run_id: runId });

    const second = await SseConnection.open(base(), `/runs/${runId}/events`, { ...AS_ALICE, 'Last-Event-ID': '6' });
    await second.ended;
    const rest = second.messages.map((message) => ({ id: message.id, event: message.event, item: JSON.parse(message.data) }));
    expect(rest.map((entry) => [entry.id, entry.event])).toEqual([
      ['7', 'resumed'],
      ['8', 'event'],
      ['9', 'event'],
      ['10', 'terminal'],
    ]);
    expect(rest[1].item.event.content).toMatchObject({ call_id: 'deploy-1', response: { success: true, result: { deployed: 'api' } } });
    expect(rest[2].item.event.kind).toBe('final_output');
    expect(rest[3].item).toEqual({ seq: 10, type: 'terminal', status: 'completed' });

    const status = await service.http.send(`/runs/${runId}`).result;
    expect(status.body).toMatchObject({ schema_version: 1, run_id: runId, agent: 'operator', status: 'completed', pending_call_ids: [], last_seq: 10, error: null });
    const admission = await service.http.send('/admission/status').result;
    expect(admission.body).toMatchObject({ active: 0, queue_length: 0 });
  });

  test('the helper agent runs without a pause, and readiness names the run registry', async () => {
    const started = await service.http.send('/runs', { method: 'POST', body: { agent: 'helper', message: 'Where is the runbook?' } }).result;
    const stream = await SseConnection.open(base(), `/runs/${started.body.run_id}/events`, AS_ALICE);
    await stream.ended;
    const items = stream.messages.map((message) => JSON.parse(message.data));
    expect(items.map((item) => item.event?.kind ?? item.type)).toEqual(['user_message', 'model_turn', 'tool_response', 'final_output', 'terminal']);
    expect(items.at(-1)).toEqual({ seq: 5, type: 'terminal', status: 'completed' });
    // The terminal item reaches this stream through NOTIFY on the store's listener connection, which
    // can arrive before the driver's own commit reply; the run leaves `active` once that reply is in.
    const ready = await eventually(async () => {
      const answer = await service.http.send('/health/ready').result;
      return answer.body?.info?.runs?.active === 0 && answer;
    }, 5_000, 'readiness to count no active run');
    expect(ready.status).toBe(200);
    expect(ready.body.info.runs).toEqual({ status: 'up', accepting: true, active: 0 });
  });
  test('a canary secret in a denied message reaches no status record, stream item, error body or log line', async () => {
    const canary = 'CANARY-7f3a9c-secret';
    const message = `${canary} ${'x'.repeat(5000)}`;
    const started = await service.http.send('/runs', { method: 'POST', body: { agent: 'helper', message } }).result;
    expect(started.status).toBe(202);
    const stream = await SseConnection.open(base(), `/runs/${started.body.run_id}/events`, AS_ALICE);
    await stream.ended;
    const items = stream.messages.map((entry) => JSON.parse(entry.data));
    expect(items.map((item) => item.event?.kind ?? item.type)).toEqual(['policy_audit', 'terminal']);
    expect(items[1]).toMatchObject({ status: 'failed', error: { code: 'runtime_policy_denied', details: { operation: 'agent_invocation', reason: 'content_budget_exceeded' } } });
    const status = await service.http.send(`/runs/${started.body.run_id}`).result;
    expect(status.body).toMatchObject({ status: 'failed', error: { code: 'runtime_policy_denied' } });
    const badConfirm = await service.http.send(`/runs/${started.body.run_id}/confirmations/c1`, { method: 'POST', body: { confirmed: true, payload: canary } }).result;
    expect(badConfirm.status).toBe(409);
    for (const text of [JSON.stringify(items), status.text, badConfirm.text, ...logger.entries.map((entry) => entry.text)]) expect(text).not.toContain(canary);
  });
});

/**
 * The reference service's demo authentication (issue 22) over a real socket: runs belong to the
 * user whose bearer token started them, the approver role confirms any run, and the console shows
 * each viewer only what they may see.
 */
import { eventually } from '../support/eventually';
import { RecordingLogger } from './support/harness';
import { AS_ALICE, AS_BOB, AS_OPERATOR, useReferenceService } from './support/reference-service';
import { SseConnection } from './support/sse-client';

describe('the reference service: runs belong to their user (issue 22)', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);

  /** The first console snapshot `headers` may see. */
  async function snapshotFor(headers: Record<string, string>): Promise<any> {
    const stream = await SseConnection.open(service.http.baseUrl, '/console/events', headers);
    try {
      const [first] = await stream.waitForMessages(1);
      return JSON.parse(first.data);
    } finally {
      stream.close();
    }
  }

  async function pausedRunOfAlice(): Promise<string> {
    const started = await service.http.send('/runs', { method: 'POST', body: { agent: 'operator', message: 'Clear the cache and deploy the api' }, headers: AS_ALICE }).result;
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await eventually(async () => (await service.http.send(`/runs/${runId}`, { headers: AS_ALICE }).result).body.status === 'paused', 10_000, 'the pause');
    return runId;
  }

  test("bob's console lists none of alice's runs or confirmations and his approval is refused; the operator's goes through", async () => {
    const runId = await pausedRunOfAlice();
    const forBob = await snapshotFor(AS_BOB);
    expect(forBob.runs.map((run: { run_id: string }) => run.run_id)).not.toContain(runId);
    expect(forBob.confirmations).toEqual([]);
    expect(forBob.denials).toEqual({ status: 'not_shown' });
    expect(JSON.stringify(forBob)).not.toContain(runId);

    const forAlice = await snapshotFor(AS_ALICE);
    expect(forAlice.runs.map((run: { run_id: string }) => run.run_id)).toContain(runId);
    expect(forAlice.confirmations).toContainEqual({ run_id: runId, call_id: 'deploy-1', tool: 'deploy' });
    const forOperator = await snapshotFor(AS_OPERATOR);
    expect(forOperator.confirmations).toContainEqual({ run_id: runId, call_id: 'deploy-1', tool: 'deploy' });
    expect(forOperator.denials.status).toBe('ok');

    // the console approves through the run routes, with the viewer's credentials
    const byBob = await service.http.send(`/runs/${runId}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: true }, headers: AS_BOB }).result;
    expect(byBob).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    expect(await service.http.send(`/runs/${runId}/cancel`, { method: 'POST', body: {}, headers: AS_OPERATOR }).result).toMatchObject({ status: 404 });
    const byOperator = await service.http.send(`/runs/${runId}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: true }, headers: AS_OPERATOR }).result;
    expect(byOperator.status).toBe(202);
    await eventually(async () => (await service.http.send(`/runs/${runId}`, { headers: AS_ALICE }).result).body.status === 'completed', 10_000, 'the completion');
  });

  /** The stored session events of a run that has ended, as `GET /runs/:id/events` streams them to `headers`. */
  async function endedRunEvents(runId: string, headers: Record<string, string>): Promise<any[]> {
    const stream = await SseConnection.open(service.http.baseUrl, `/runs/${runId}/events`, headers);
    await stream.ended;
    return stream.messages.map((message) => JSON.parse(message.data));
  }

  test("the operator's approval of alice's deploy is recorded with the operator's id; alice's own rejection with hers", async () => {
    const approved = await pausedRunOfAlice();
    expect((await service.http.send(`/runs/${approved}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: true }, headers: AS_OPERATOR }).result).status).toBe(202);
    await eventually(async () => (await service.http.send(`/runs/${approved}`, { headers: AS_ALICE }).result).body.status === 'completed', 10_000, 'the completion');
    const items = await endedRunEvents(approved, AS_ALICE);
    expect(items.find((item) => item.type === 'resumed')).toMatchObject({ call_id: 'deploy-1', confirmed_by: 'operator' });
    const responses = items.filter((item) => item.event?.kind === 'tool_response').map((item) => item.event.content);
    expect(responses.find((content) => content.call_id === 'deploy-1')).toMatchObject({ response: { success: true }, confirmed_by: 'operator' });
    // a response nobody confirmed carries no approver, and the denial made before the pause has approved_by null
    expect(responses.filter((content) => content.call_id !== 'deploy-1').every((content) => !('confirmed_by' in content))).toBe(true);
    const audits = items.filter((item) => item.event?.kind === 'policy_audit').map((item) => item.event.actions.runtime_policy_decision);
    expect(audits.length).toBeGreaterThan(0);
    expect(audits.every((decision) => decision.schema_version === 2 && decision.approved_by === null)).toBe(true);

    const rejected = await pausedRunOfAlice();
    expect((await service.http.send(`/runs/${rejected}/confirmations/deploy-1`, { method: 'POST', body: { confirmed: false }, headers: AS_ALICE }).result).status).toBe(202);
    await eventually(async () => (await service.http.send(`/runs/${rejected}`, { headers: AS_ALICE }).result).body.status === 'completed', 10_000, 'the completion');
    const rejection = (await endedRunEvents(rejected, AS_OPERATOR)).find((item) => item.event?.kind === 'tool_response' && item.event.content.call_id === 'deploy-1');
    expect(rejection.event.content).toMatchObject({ response: { success: false, error: { kind: 'confirmation_rejected' } }, confirmed_by: 'alice' });
  });

  test('without a token: 401 unauthenticated on the runs and console routes; a token in the console cookie works; user_id in a body is refused', async () => {
    const none = { authorization: '' };
    for (const path of ['/runs/run-unknown', '/console', '/console/events', '/console/audit/verify']) {
      expect(await service.http.send(path, { headers: none }).result).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    }
    expect(await service.http.send('/runs', { method: 'POST', body: { agent: 'helper', message: 'hi' }, headers: none }).result).toMatchObject({ status: 401 });
    expect((await service.http.send('/console', { headers: { authorization: '', cookie: 'theme=dark; reference_token=bob-token' } }).result).status).toBe(200);
    const spoofed = await service.http.send('/runs', { method: 'POST', body: { agent: 'helper', user_id: 'alice', message: 'hi' }, headers: AS_BOB }).result;
    expect(spoofed).toMatchObject({ status: 400, body: { code: 'invalid_run_request' } });
  });

  test('no log line carries a token, whatever the requests sent', async () => {
    await pausedRunOfAlice();
    await service.http.send('/runs/run-unknown', { headers: { authorization: 'Bearer not-a-known-token' } }).result;
    expect(logger.entries.length).toBeGreaterThan(0);
    expect(JSON.stringify(logger.entries)).not.toMatch(/alice-token|bob-token|operator-token|not-a-known-token/);
  });
});

import { parseExposition, seriesOf } from '../../src/observability/metrics/testing/exposition';
import { RecordingLogger } from './support/harness';
import { AS_ALICE, useReferenceService } from './support/reference-service';
import { SseConnection } from './support/sse-client';

/** The reference service builds its Runners without `events`, as the docs do: its runs still reach `/metrics`. */
describe('the reference service: runner metrics without the events option', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);

  test('a completed run of the helper agent is counted on GET /metrics', async () => {
    const before = seriesOf(parseExposition((await service.http.send('/metrics').result).text), 'agent_runtime_runner_invocations_total');
    expect(before).toEqual({});
    const started = await service.http.send('/runs', { method: 'POST', body: { agent: 'helper', message: 'Where is the runbook?' } }).result;
    expect(started.status).toBe(202);
    const stream = await SseConnection.open(service.http.baseUrl, `/runs/${started.body.run_id}/events`, AS_ALICE);
    await stream.ended;

    const scraped = await service.http.send('/metrics').result;
    expect(scraped.status).toBe(200);
    expect(seriesOf(parseExposition(scraped.text), 'agent_runtime_runner_invocations_total')).toEqual({ 'agent_id=helper,outcome=completed,status=completed': 1 });
  });
});

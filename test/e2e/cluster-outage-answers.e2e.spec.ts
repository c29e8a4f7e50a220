import type { INestApplication } from '@nestjs/common';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { eventually } from '../support/eventually';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { RecordingLogger } from './support/harness';
import type { HttpClient } from './support/http-client';
import { startReferenceService } from './support/reference-service';

/**
 * The run routes of the reference service in cluster mode while its Postgres host is out of reach:
 * the run store's `cluster_unavailable` answers 503 with `Retry-After` and its code, not a 500
 * `internal_error` (issue 20: 129 of them during a Postgres restart).
 */
describe('run routes in cluster mode during a database outage', () => {
  let database: FreshDatabase;
  let proxy: TcpProxy;
  let app: INestApplication;
  let http: HttpClient;
  let runId: string;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    database = await createFreshDatabase();
    proxy = await startTcpProxy(database.url);
    ({ app, http } = await startReferenceService({ databaseUrl: proxy.url, cluster: { instanceId: 'outage-answers' }, logDecisions: false }, logger));
    const started = await http.send('/runs', { method: 'POST', body: { agent: 'helper', message: 'Where is the runbook?' } }).result;
    expect(started.status).toBe(202);
    runId = started.body.run_id;
    await eventually(async () => (await http.send(`/runs/${runId}`).result).body.status === 'completed', 10_000, 'the run before the outage');
    proxy.cut();
  }, 60_000);

  afterAll(async () => {
    proxy?.restore();
    // closed only once every listener is back: a close during pg-listen's reconnection leaves its check interval running
    if (http) await eventually(async () => (await http.send('/health/ready').result).status === 200, 30_000, 'readiness after the outage').catch(() => undefined);
    await app?.close();
    await proxy?.sever();
    await database?.drop();
  });

  const outageLines = (route: string) => logger.entries.map((entry) => entry.text).filter((text) => text.startsWith('503 ') && text.includes(`route=${route} `));

  it('GET /runs/:id answers 503 cluster_unavailable with Retry-After, logged as one line without a stack', async () => {
    const before = outageLines('GET /runs/:id').length;
    const result = await http.send('/runs/run-not-in-memory-0001').result;
    expect(result.status).toBe(503);
    expect(result.headers['retry-after']).toBe('1');
    expect(result.body).toMatchObject({ status_code: 503, error: 'Service Unavailable', code: 'cluster_unavailable' });
    expect(Object.keys(result.body.details ?? {}).filter((key) => key !== 'reason')).toEqual([]);
    expect(outageLines('GET /runs/:id').slice(before)).toEqual([expect.stringMatching(/^503 cluster_unavailable .*route=GET \/runs\/:id /)]);
    expect(logger.entries.map((entry) => entry.text).join('\n')).not.toMatch(/^\s+at /m);
  });

  it('POST /runs answers 503 with Retry-After and a code, never 500 internal_error', async () => {
    const results = await Promise.all([1, 2, 3].map(() => http.send('/runs', { method: 'POST', body: { agent: 'helper', message: 'Still there?' } }).result));
    for (const result of results) {
      expect({ status: result.status, retryAfter: result.headers['retry-after'] }).toEqual({ status: 503, retryAfter: '1' });
      expect(result.body).toMatchObject({ status_code: 503, error: 'Service Unavailable', code: expect.stringMatching(/^[a-z_]+$/) });
    }
    expect(results.map((result) => result.body.code)).toContain('cluster_unavailable');
  });
});

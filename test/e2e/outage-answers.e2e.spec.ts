import type { INestApplication } from '@nestjs/common';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { HttpClient } from './support/http-client';
import { RecordingLogger } from './support/harness';
import { startReferenceService } from './support/reference-service';

const OUTAGE_CODES = ['ledger_unavailable', 'transaction_aborted', 'stale_owner', 'lease_expired'];

/** The reference service when its Postgres host vanishes: 503 with a code and `Retry-After`, one log line each. */
describe('reference service during a database outage', () => {
  let database: FreshDatabase;
  let proxy: TcpProxy;
  let app: INestApplication;
  let http: HttpClient;
  let invocationId: string;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    database = await createFreshDatabase();
    proxy = await startTcpProxy(database.url);
    ({ app, http } = await startReferenceService({ databaseUrl: proxy.url }, logger));
    const invoked = await http.send('/agents/a/invoke', { method: 'POST', body: { work_ms: 0 } }).result;
    expect(invoked.status).toBe(200);
    invocationId = invoked.body.invocation_id;
    await proxy.sever();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await proxy?.sever();
    await database?.drop();
  });

  const outageLines = () => logger.entries.map((entry) => entry.text).filter((text) => /^503 /.test(text));

  it.each([
    ['POST /agents/:agent/invoke', () => http.send('/agents/a/invoke', { method: 'POST', body: { work_ms: 0 } }).result],
    ['GET /invocations/:id', () => http.send(`/invocations/${invocationId}`).result],
  ])('%s answers 503 with a code and Retry-After, logged as one line without a stack', async (route, send) => {
    const before = outageLines().length;
    const result = await send();
    expect(result.status).toBe(503);
    expect(result.headers['retry-after']).toBe('1');
    expect(result.body).toMatchObject({ status_code: 503, error: 'Service Unavailable' });
    expect(OUTAGE_CODES).toContain(result.body.code);
    expect(Object.keys(result.body.details ?? {}).filter((key) => key !== 'reason')).toEqual([]);

    const lines = outageLines().slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^503 ${result.body.code} .*route=${route.replace(/[/]/g, '\\/')}`));
    expect(logger.entries.map((entry) => entry.text).join('\n')).not.toMatch(/^\s+at /m);
  });

  it('keeps answering 503 for every request while the host is gone, one line per failure', async () => {
    const before = outageLines().length;
    const startedAt = Date.now();
    const results = await Promise.all([1, 2, 3, 4].map(() => http.send('/agents/b/invoke', { method: 'POST', body: { work_ms: 0 } }).result));
    expect(results.map((result) => result.status)).toEqual([503, 503, 503, 503]);
    // answered without waiting out the background retries that end a possibly committed claim (25 s)
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(outageLines().slice(before)).toHaveLength(4);
  });
});

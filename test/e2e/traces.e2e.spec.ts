import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { TraceStore } from '../../src/trace/trace-store';
import { TraceStoreHealthIndicator } from '../../src/trace/trace-store.health';
import { TraceStoreModule } from '../../src/trace/trace-store.module';
import type { TraceStoreModuleOptions } from '../../src/trace/trace-store-module-options';
import { RecordingLogger } from './support/harness';
import { HttpClient } from './support/http-client';
import { AS_ALICE, AS_BOB, AS_OPERATOR, useReferenceService } from './support/reference-service';
import { SseConnection } from './support/sse-client';

async function startApp(options: TraceStoreModuleOptions): Promise<{ app: INestApplication; http: HttpClient }> {
  const moduleRef = await Test.createTestingModule({ imports: [TraceStoreModule.forRoot(options)] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, http: new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`) };
}

/** The app's authentication stand-in: the tenant header names the principal. */
const tenantOf = (request: unknown) => {
  const tenant = (request as { headers: Record<string, string | undefined> }).headers['x-tenant'];
  return tenant ? { id: tenant } : null;
};

const event = (run: string, n: number) => ({ event: 'runner.tool.call', timestamp_ms: n, metadata: { run_id: run, call_id: `c${n}` }, attributes: { outcome: 'executed' } });

describe('GET /traces (spec 06 §11)', () => {
  const apps: INestApplication[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  test('serves only the calling principal, pages with after_cursor and limit, and answers gaps and bad parameters with codes', async () => {
    const { app, http } = await startApp({ resolvePrincipal: tenantOf });
    apps.push(app);
    const store = app.get(TraceStore);
    for (let n = 1; n <= 3; n += 1) store.appendObservability('tenant-a', event('run-a', n));
    store.appendObservability('tenant-b', event('run-b', 9));
    const page = await http.send('/traces?run_id=run-a&limit=2', { headers: { 'x-tenant': 'tenant-a' } }).result;
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ next_cursor: 2, truncated: true, latest_cursor: 3 });
    expect(page.body.events.map((record: { cursor: number }) => record.cursor)).toEqual([1, 2]);
    const next = await http.send('/traces?run_id=run-a&after_cursor=2', { headers: { 'x-tenant': 'tenant-a' } }).result;
    expect(next.body.events.map((record: { cursor: number }) => record.cursor)).toEqual([3]);
    const other = await http.send('/traces?run_id=run-a', { headers: { 'x-tenant': 'tenant-b' } }).result;
    expect(other.body.events).toEqual([]);
    const ahead = await http.send('/traces?run_id=run-a&after_cursor=99', { headers: { 'x-tenant': 'tenant-a' } }).result;
    expect(ahead.status).toBe(409);
    expect(ahead.body).toMatchObject({ code: 'cursor_ahead', details: { after_cursor: 99, latest_cursor: 3 } });
    for (const [query, code] of [
      ['limit=abc', 'invalid_trace_query_options'],
      ['limit=-1', 'invalid_trace_query_options'],
      ['run_id=a&run_id=b', 'invalid_trace_selector'],
      ['after_cursor=1&after_cursor=2', 'invalid_trace_query_options'],
    ]) {
      const answer = await http.send(`/traces?${query}`, { headers: { 'x-tenant': 'tenant-a' } }).result;
      expect([answer.status, answer.body.code]).toEqual([400, code]);
    }
    const nobody = await http.send('/traces', { headers: { 'x-tenant': '' } }).result;
    expect(nobody.body).toEqual({ status_code: 401, error: 'Unauthorized', code: 'unauthenticated' });
    const health = app.get(TraceStoreHealthIndicator).isHealthy();
    expect(health).toEqual({ trace_store: { status: 'up', events: 4, principals: 2, lifecycle_pending: 0, lifecycle_delivery_dropped: 0 } });
  });

  test("no query parameter or header reaches another principal's partition", async () => {
    const { app, http } = await startApp({ resolvePrincipal: tenantOf });
    apps.push(app);
    const store = app.get(TraceStore);
    store.appendObservability('tenant-a', event('run-a', 1));
    store.appendObservability('tenant-b', event('run-b', 2));
    for (const query of ['', '?run_id=run-a', '?principal=tenant-a', '?principal=tenant-a&run_id=run-a', '?tenant=tenant-a', '?partition=tenant-a']) {
      const answer = await http.send(`/traces${query}`, { headers: { 'x-tenant': 'tenant-b', 'x-principal': 'tenant-a', 'x-trace-principal': 'tenant-a' } }).result;
      expect(JSON.stringify(answer.body ?? null)).not.toContain('run-a');
    }
    const own = await http.send('/traces', { headers: { 'x-tenant': 'tenant-b' } }).result;
    expect(own.body.events).toHaveLength(1);
    expect(JSON.stringify(own.body)).toContain('run-b');
  });

  test('without resolvePrincipal the route answers 404; with enabled: false there is no store and it answers 503', async () => {
    const noResolver = await startApp({});
    apps.push(noResolver.app);
    expect((await noResolver.http.send('/traces').result).status).toBe(404);
    const disabled = await startApp({ enabled: false, resolvePrincipal: () => ({ id: 'tenant' }) });
    apps.push(disabled.app);
    const answer = await disabled.http.send('/traces').result;
    expect([answer.status, answer.body.code]).toEqual([503, 'trace_store_unavailable']);
    expect(disabled.app.get(TraceStoreHealthIndicator).isHealthy()).toEqual({ trace_store: { status: 'down', enabled: false } });
  });
});

describe('the reference service traces its runs', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);

  test('GET /traces?run_id= returns the run lifecycle and the Runner events of a run together, to the approver only (the partition of every reference Runner)', async () => {
    const started = await service.http.send('/runs', { method: 'POST', body: { agent: 'helper', message: 'Where is the runbook?' } }).result;
    const runId = started.body.run_id as string;
    const stream = await SseConnection.open(service.http.baseUrl, `/runs/${runId}/events`, AS_ALICE);
    await stream.ended;
    await new Promise((resolve) => setImmediate(resolve));
    for (const viewer of [AS_ALICE, AS_BOB]) {
      const own = await service.http.send(`/traces?run_id=${runId}&principal=local-runtime`, { headers: viewer }).result;
      expect(own.status).toBe(200);
      expect(own.body.events).toEqual([]);
    }
    expect((await service.http.send('/traces', { headers: { authorization: '' } }).result).status).toBe(401);
    const page = await service.http.send(`/traces?run_id=${runId}`, { headers: AS_OPERATOR }).result;
    expect(page.status).toBe(200);
    const kinds = page.body.events.map((record: { kind: string; event: { type?: string; event?: string } }) => record.event.type ?? record.event.event);
    expect(kinds[0]).toBe('run_started');
    expect(kinds).toContain('runner.tool.call');
    expect(kinds.at(-1)).toBe('run_terminal');
    expect(JSON.stringify(page.body)).not.toContain('Where is the runbook?');
  });
});

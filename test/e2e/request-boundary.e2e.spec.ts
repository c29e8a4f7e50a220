/**
 * Issue 22, items 5 and 7, against the reference service on a real socket: every mutating route reads
 * `application/json` only (415 before admission, before anything is created), and content the
 * Runner's session store would refuse (U+0000, a lone surrogate) or a body over the HTTP limit is
 * refused before a run exists. "Nothing happened" is measured on the service's own records: the
 * runs, their items, the ledger, the audit log, the evaluation jobs and the admission decisions.
 */
import { Client } from 'pg';
import { parseExposition, seriesOf } from '../../src/observability/metrics/testing/exposition';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { RecordingLogger } from './support/harness';
import { AS_ALICE, startReferenceService, type ReferenceService } from './support/reference-service';

const UNSUPPORTED = { status_code: 415, error: 'Unsupported Media Type', code: 'unsupported_media_type' };
const RUN_BODY = { agent: 'operator', message: 'Clear the cache and deploy the api', durable: true };
const CANARY = 'canary-7c41-secret';

/** A request as a browser or an attacker sends it: `fetch`, so no header is added but the ones given (a byte body gets no `Content-Type`). */
async function send(base: string, method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
  // as alice: the content-type rule answers before anything else, the principal check included
  const response = await fetch(new URL(path, base), { method, body, headers: { ...AS_ALICE, ...headers } });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}

const json = (body: unknown) => [JSON.stringify(body), { 'content-type': 'application/json' }] as const;

describe('the request boundary of the reference service (issue 22, items 5 and 7)', () => {
  const logger = new RecordingLogger();
  let database: FreshDatabase;
  let service: ReferenceService;
  let admin: Client;
  let base: string;
  let pausedRunId: string;

  beforeAll(async () => {
    database = await createFreshDatabase();
    service = await startReferenceService({ databaseUrl: database.url }, logger);
    base = service.http.baseUrl;
    admin = new Client({ connectionString: database.url });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await service?.app.close();
    await database?.drop();
  });

  /** Everything a request could have created or admitted, counted. */
  async function footprint(): Promise<Record<string, unknown>> {
    const count = async (table: string) => (await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
    const metrics = parseExposition((await send(base, 'GET', '/metrics')).text);
    const jobs = await send(base, 'GET', '/evaluations');
    // the reference service keeps its runs in memory (in Postgres in cluster mode): the registry lists them
    const runs = await service.app.get(RunRegistry).list(1024);
    return {
      runs: runs.map((run) => `${run.run_id} ${run.status} ${run.last_seq}`).sort(),
      ledger: await count('agent_runtime_invocations'),
      audit: await count('agent_runtime_policy_audit_log'),
      eval_jobs: (jobs.body.jobs as unknown[]).length,
      admission: seriesOf(metrics, 'agent_runtime_admission_decisions_total'),
    };
  }

  async function statusOf(runId: string): Promise<string> {
    return (await send(base, 'GET', `/runs/${runId}`)).body.status as string;
  }

  async function waitForStatus(runId: string, status: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while ((await statusOf(runId)) !== status) {
      if (Date.now() > deadline) throw new Error(`run never reached ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('counts what a JSON request creates, so the checks below can see a change', async () => {
    const before = await footprint();
    const started = await send(base, 'POST', '/runs', ...json(RUN_BODY));
    expect(started.status).toBe(202);
    pausedRunId = started.body.run_id as string;
    await waitForStatus(pausedRunId, 'paused');
    const after = await footprint();
    expect(after.runs).toEqual([...(before.runs as string[]), `${pausedRunId} paused 6`]);
    expect(after.ledger).toBe((before.ledger as number) + 1);
    expect(after.audit).toBeGreaterThan(before.audit as number);
    expect(after.admission).not.toEqual(before.admission);
  });

  const form = ['application/x-www-form-urlencoded', `agent=operator&message=${CANARY}&confirmed=true&work_ms=1&prompt=${CANARY}`];
  const textPlain = ['text/plain', JSON.stringify({ ...RUN_BODY, message: CANARY, confirmed: true, prompt: CANARY, job_id: 'x' })];
  const multipart = ['multipart/form-data; boundary=b', `--b\r\nContent-Disposition: form-data; name="message"\r\n\r\n${CANARY}\r\n--b--\r\n`];
  const mutatingRoutes = (): Array<[string, string]> => [
    ['POST', '/runs'],
    ['POST', `/runs/${pausedRunId}/cancel`],
    ['POST', `/runs/${pausedRunId}/confirmations/deploy-1`],
    ['POST', '/evaluations'],
    ['PUT', '/evaluations/baselines/reference-helper/main'],
    ['POST', '/evaluations/job-1/cancel'],
    ['POST', '/agents/helper/invoke'],
    ['POST', '/agents/helper/invoke-now'],
    ['POST', '/chat/helper'],
    ['POST', '/chat/stranger'],
    ['POST', '/tools/search'],
    ['POST', '/tools/shell'],
  ];

  it.each([
    ['a form (application/x-www-form-urlencoded)', form],
    ['text/plain holding JSON', textPlain],
    ['multipart/form-data', multipart],
  ])('answers %s on every mutating route with 415, and creates, admits and audits nothing', async (_what, [contentType, body]) => {
    const before = await footprint();
    for (const [method, path] of mutatingRoutes()) {
      const answer = await send(base, method, path, body, { 'content-type': contentType as string });
      expect({ route: `${method} ${path}`, status: answer.status, body: answer.body }).toEqual({ route: `${method} ${path}`, status: 415, body: UNSUPPORTED });
      expect(answer.text).not.toContain(CANARY);
    }
    // the same form with an empty body: a browser can send that too
    expect((await send(base, 'POST', `/runs/${pausedRunId}/cancel`, '', { 'content-type': 'application/x-www-form-urlencoded' })).body).toEqual(UNSUPPORTED);
    expect(await footprint()).toEqual(before);
    expect(await statusOf(pausedRunId)).toBe('paused');
  });

  it('answers a body without a Content-Type with 415; a body-less POST and application/json with parameters pass', async () => {
    const before = await footprint();
    const bytes = new TextEncoder().encode(JSON.stringify(RUN_BODY));
    for (const [method, path] of mutatingRoutes()) {
      expect({ route: path, answer: (await send(base, method, path, bytes)).body }).toEqual({ route: path, answer: UNSUPPORTED });
    }
    expect(await footprint()).toEqual(before);
    // no body, no Content-Type: read as an empty JSON body (an unknown job is 404, not 415)
    expect((await send(base, 'POST', '/evaluations/job-1/cancel')).status).toBe(404);
    const withCharset = await send(base, 'POST', '/chat/helper', JSON.stringify({ prompt: 'hi' }), { 'content-type': 'Application/JSON; charset=utf-8' });
    expect(withCharset).toMatchObject({ status: 200, body: { agent: 'helper' } });
  });

  it.each([
    ['U+0000 in a string message', `{"agent":"operator","durable":true,"message":"a\\u0000${CANARY}"}`],
    ['U+0000 in a Content part', `{"agent":"operator","durable":true,"message":{"role":"user","parts":[{"data":{"k\\u0000":"${CANARY}"}}]}}`],
    ['a lone surrogate', `{"agent":"operator","durable":true,"message":"\\ud800${CANARY}"}`],
  ])('refuses a POST /runs message with %s: 400 {field: message}, no run, no ledger row, no admission', async (_what, body) => {
    const before = await footprint();
    const answer = await send(base, 'POST', '/runs', body, { 'content-type': 'application/json' });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: { status_code: 400, error: 'Bad Request', code: 'invalid_run_request', details: { field: 'message' } } });
    expect(answer.text).not.toContain(CANARY);
    expect(await footprint()).toEqual(before);
  });

  it('refuses a POST /runs body over the HTTP body limit with 413 before a run exists', async () => {
    const before = await footprint();
    const answer = await send(base, 'POST', '/runs', ...json({ ...RUN_BODY, message: 'x'.repeat(120_000) }));
    expect(answer.body).toEqual({ status_code: 413, error: 'Payload Too Large', code: 'body_too_large', details: { limit: 102400 } });
    expect(await footprint()).toEqual(before);
  });

  it('refuses a confirmation payload holding U+0000 with 400 {field: payload}; the run stays paused and is confirmed afterwards', async () => {
    const before = await footprint();
    const answer = await send(base, 'POST', `/runs/${pausedRunId}/confirmations/deploy-1`, `{"confirmed":true,"payload":{"note":"a\\u0000${CANARY}"}}`, { 'content-type': 'application/json' });
    expect(answer.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'resume_input_required', details: { field: 'payload' } });
    expect(await footprint()).toEqual(before);
    expect(await statusOf(pausedRunId)).toBe('paused');
    expect((await send(base, 'POST', `/runs/${pausedRunId}/confirmations/deploy-1`, ...json({ confirmed: true, payload: { note: 'ok' } }))).status).toBe(202);
    await waitForStatus(pausedRunId, 'completed');
  });

  it('names a Last-Event-ID the run has not reached, or that is no number, last_event_id; after_seq keeps its name', async () => {
    const bad = (field: string) => ({ status_code: 400, error: 'Bad Request', code: 'invalid_run_request', details: { field } });
    for (const value of ['999', 'abc', '-1']) {
      expect((await send(base, 'GET', `/runs/${pausedRunId}/events`, undefined, { 'last-event-id': value })).body).toEqual(bad('last_event_id'));
    }
    expect((await send(base, 'GET', `/runs/${pausedRunId}/events?after_seq=999`)).body).toEqual(bad('after_seq'));
    expect((await send(base, 'GET', `/runs/${pausedRunId}/events?after_seq=1`, undefined, { 'last-event-id': '999' })).body).toEqual(bad('last_event_id'));
  });
});

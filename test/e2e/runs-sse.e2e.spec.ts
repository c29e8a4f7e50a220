/**
 * End-to-end tests of the run routes (spec 03 §9–§10) through a real Nest app on a real socket,
 * with the real Runner, a ScriptedModel and the in-memory session service: the SSE stream in order,
 * replay after a reconnect with Last-Event-ID, runs that outlive the requests that started or
 * followed them, cancel and confirmation over HTTP, and the error answers.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Agent, Tool, ToolContext } from '../../src/runner/agent.types';
import type { JsonObject } from '../../src/runner/content.types';
import { InMemorySessionService } from '../../src/services/sessions/in-memory-session-service';
import type { ModelResponse } from '../../src/runner/models/model.types';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import { Runner } from '../../src/runner/runner';
import type { RunsModuleOptions } from '../../src/runner/runs/runs-module-options';
import { RunsHealthIndicator } from '../../src/runner/runs/runs.health';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { ScriptedModel, type ScriptedStep } from '../../src/runner/models/scripted-model';
import { waitFor } from './support/harness';
import { HttpClient } from './support/http-client';
import { SseConnection } from './support/sse-client';

const APP = 'runs-e2e';
const USER = 'user-1';
const AGENT = 'assistant';
const BAD_REQUEST = { status_code: 400, error: 'Bad Request', code: 'invalid_run_request' };
const NOT_FOUND = { status_code: 404, error: 'Not Found' };

/** Holds a model step until released; remembers the signal the step was called with. */
class Gate {
  signal: AbortSignal | undefined;
  entered = false;
  private release!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));

  step(response: ModelResponse): ScriptedStep {
    return async (_request, signal) => {
      this.signal = signal;
      this.entered = true;
      await this.opened;
      return response;
    };
  }

  open(): void {
    this.release();
  }
}

/** Polls an asynchronous condition until it holds; fails after `timeoutMs`. */
async function eventually(condition: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface RunsApp {
  readonly app: INestApplication;
  readonly url: string;
  readonly http: HttpClient;
  readonly registry: RunRegistry;
  readonly runner: Runner;
  readonly sessions: InMemorySessionService;
  sse(path: string, headers?: Record<string, string>): Promise<SseConnection>;
  post(path: string, body?: unknown): Promise<{ status: number; body: any; text: string }>;
  get(path: string): Promise<{ status: number; body: any; text: string }>;
  /** POST /runs of a plain message; answers the started ids. */
  startRun(extra?: Record<string, unknown>): Promise<{ run_id: string; session_id: string }>;
  waitForStatus(runId: string, status: string): Promise<any>;
}

describe('run routes over HTTP (spec 03 §10)', () => {
  const open: RunsApp[] = [];
  const streams: SseConnection[] = [];

  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    for (const t of open.splice(0)) {
      t.http.destroyAll();
      await t.app.close();
    }
  });

  async function startApp(agent: Agent, options: Omit<RunsModuleOptions, 'runners'> = {}): Promise<RunsApp> {
    const sessions = new InMemorySessionService();
    const runner = new Runner({ appName: APP, agent, sessionService: sessions });
    const moduleRef = await Test.createTestingModule({ imports: [RunsModule.forRoot({ runners: [runner], resolvePrincipal: () => ({ id: USER }), ...options })] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    const http = new HttpClient(url);
    const registry = app.get(RunRegistry);
    const t: RunsApp = {
      app,
      url,
      http,
      registry,
      runner,
      sessions,
      sse: async (path, headers) => {
        const stream = await SseConnection.open(url, path, headers);
        streams.push(stream);
        return stream;
      },
      post: (path, body) => http.send(path, { method: 'POST', body }).result,
      get: (path) => http.get(path).result,
      startRun: async (extra = {}) => {
        const answer = await t.post('/runs', { agent: AGENT, message: 'hello', ...extra });
        expect(answer.status).toBe(202);
        return answer.body;
      },
      waitForStatus: async (runId, status) => {
        let record: any;
        await eventually(async () => (record = (await t.get(`/runs/${runId}`)).body).status === status, `status ${status}`);
        return record;
      },
    };
    open.push(t);
    return t;
  }

  /** An agent that calls `lookup` once, then answers after `gate` opens: 4 events and the terminal item. */
  function lookupAgent(gate: Gate) {
    const executions: JsonObject[] = [];
    const lookup: Tool = { name: 'lookup', execute: (args) => (executions.push(args), { found: true }) };
    const model = new ScriptedModel([{ toolCalls: [{ id: 'call-a', name: 'lookup', args: { q: 1 } }] }, gate.step({ text: 'done' })]);
    return { agent: { name: AGENT, model, tools: [lookup] } as Agent, executions };
  }

  describe('POST /runs and GET /runs/:id/events', () => {
    it('answers 202 {run_id, session_id} at once, then streams every item in order and closes after the terminal item', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const started = await t.startRun();
      expect(Object.keys(started).sort()).toEqual(['run_id', 'session_id']);
      expect(started.run_id).toMatch(/^run-/);

      const stream = await t.sse(`/runs/${started.run_id}/events`);
      expect(stream.status).toBe(200);
      expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
      await stream.waitForMessages(3);
      expect(stream.isEnded).toBe(false);
      gate.open();
      await stream.ended;

      const items = stream.items();
      expect(stream.messages.map((message) => message.id)).toEqual(['1', '2', '3', '4', '5']);
      expect(stream.messages.map((message) => message.event)).toEqual(['event', 'event', 'event', 'event', 'terminal']);
      expect(items.map((item) => item.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(items.slice(0, 4).map((item) => item.event.kind)).toEqual(['user_message', 'model_turn', 'tool_response', 'final_output']);
      expect(items.slice(0, 4).every((item) => item.event.session_id === started.session_id)).toBe(true);
      expect(items[4]).toEqual({ seq: 5, type: 'terminal', status: 'completed' });

      const record = (await t.get(`/runs/${started.run_id}`)).body;
      expect(record).toMatchObject({ schema_version: 1, run_id: started.run_id, agent: AGENT, session_id: started.session_id, status: 'completed', last_seq: 5, error: null });
      expect(record.invocation_id).toBe(items[0].event.invocation_id);
    });

    it('reconnecting with Last-Event-ID replays only the items after it; after_seq does the same', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const { run_id } = await t.startRun();
      const first = await t.sse(`/runs/${run_id}/events`);
      await first.waitForMessages(2);
      first.close();
      gate.open();
      await t.waitForStatus(run_id, 'completed');

      const resumed = await t.sse(`/runs/${run_id}/events`, { 'Last-Event-ID': first.messages[1].id as string });
      await resumed.ended;
      const seen = [...first.messages.slice(0, 2), ...resumed.messages].map((message) => Number(message.id));
      expect(resumed.messages.map((message) => message.id)).toEqual(['3', '4', '5']);
      expect(seen).toEqual([1, 2, 3, 4, 5]);

      const byQuery = await t.sse(`/runs/${run_id}/events?after_seq=2`);
      await byQuery.ended;
      expect(byQuery.messages.map((message) => message.id)).toEqual(['3', '4', '5']);
      const headerWins = await t.sse(`/runs/${run_id}/events?after_seq=1`, { 'Last-Event-ID': '4' });
      await headerWins.ended;
      expect(headerWins.messages.map((message) => message.id)).toEqual(['5']);
      const caughtUp = await t.sse(`/runs/${run_id}/events`, { 'Last-Event-ID': '5' });
      await caughtUp.ended;
      expect(caughtUp.status).toBe(200);
      expect(caughtUp.messages).toEqual([]);
    });

    it('a replay older than the buffer is 410 run_events_evicted {oldest_seq}', async () => {
      const gate = new Gate();
      gate.open();
      const t = await startApp(lookupAgent(gate).agent, { registry: { maxBufferedItems: 2 } });
      const { run_id } = await t.startRun();
      await t.waitForStatus(run_id, 'completed');
      const evicted = await t.sse(`/runs/${run_id}/events`);
      expect(evicted.status).toBe(410);
      expect(await evicted.json()).toEqual({ status_code: 410, error: 'Gone', code: 'run_events_evicted', details: { oldest_seq: 4 } });
      const fromBuffer = await t.sse(`/runs/${run_id}/events`, { 'Last-Event-ID': '3' });
      await fromBuffer.ended;
      expect(fromBuffer.messages.map((message) => message.id)).toEqual(['4', '5']);
    });
  });

  describe('requests never own a run', () => {
    it('the POST /runs connection going away does not affect the run', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const body = JSON.stringify({ agent: AGENT, session_id: 'ses-abandoned', message: 'hello' });
      const { port } = new URL(t.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await waitFor(() => gate.entered, 'the run to reach its gated model call');
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(gate.signal?.aborted).toBe(false);
      gate.open();
      const ref = { appName: APP, userId: USER, sessionId: 'ses-abandoned' };
      await eventually(async () => (await t.sessions.listEvents(ref)).some((event) => event.kind === 'final_output'), 'the final output');
      const kinds = (await t.sessions.listEvents(ref)).map((event) => event.kind);
      expect(kinds).toEqual(['user_message', 'model_turn', 'tool_response', 'final_output']);
    });

    it('a client leaving the event stream detaches only itself: the run completes', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const { run_id } = await t.startRun();
      const stream = await t.sse(`/runs/${run_id}/events`);
      await stream.waitForMessages(1);
      stream.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await t.get(`/runs/${run_id}`)).body.status).toBe('running');
      // the invocation signal aborts when the invocation ends, so it is looked at before
      expect(gate.signal?.aborted).toBe(false);
      gate.open();
      const record = await t.waitForStatus(run_id, 'completed');
      expect(record).toMatchObject({ last_seq: 5, error: null });
    });
  });

  describe('POST /runs/:id/cancel', () => {
    it('cancels a running run: 202 with the status record, the stream ends cancelled, the model call is aborted', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const { run_id } = await t.startRun();
      const stream = await t.sse(`/runs/${run_id}/events`);
      await waitFor(() => gate.entered, 'the gated model call');

      const cancelled = await t.post(`/runs/${run_id}/cancel`, { reason: 'user_stop' });
      expect(cancelled.status).toBe(202);
      expect(cancelled.body).toMatchObject({ run_id, status: 'cancelled', error: { code: 'cancelled', details: { reason: 'user_stop' } } });
      await stream.ended;
      expect(stream.items().at(-1)).toEqual({ seq: 4, type: 'terminal', status: 'cancelled', cancelled: 'user_stop' });
      await waitFor(() => gate.signal?.aborted, 'the model call to be aborted');

      const again = await t.post(`/runs/${run_id}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ status_code: 409, error: 'Conflict', code: 'run_not_active', details: { status: 'cancelled' } });
    });

    it('a cancel without a body uses the reason cancelled', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const { run_id } = await t.startRun();
      await waitFor(() => gate.entered, 'the gated model call');
      const cancelled = await t.http.send(`/runs/${run_id}/cancel`, { method: 'POST' }).result;
      expect(cancelled.status).toBe(202);
      expect(cancelled.body.error).toEqual({ code: 'cancelled', details: { reason: 'cancelled' } });
    });
  });

  describe('POST /runs/:id/confirmations/:callId', () => {
    function transferAgent() {
      const contexts: ToolContext[] = [];
      const transfer: Tool = { name: 'transfer', requireConfirmation: true, execute: (_args, ctx) => (contexts.push(ctx), { moved: 5 }) };
      const model = new ScriptedModel([{ toolCalls: [{ id: 'call-t', name: 'transfer', args: { amount: 5 } }] }, { text: 'transferred' }]);
      return { agent: { name: AGENT, model, tools: [transfer] } as Agent, contexts };
    }

    it('a paused run resumes on a confirmation and the same stream follows it to the end', async () => {
      const { agent, contexts } = transferAgent();
      const t = await startApp(agent);
      const { run_id } = await t.startRun();
      const stream = await t.sse(`/runs/${run_id}/events`);
      const firstPart = await stream.waitForMessages(4);
      expect(firstPart.map((message) => message.event)).toEqual(['event', 'event', 'event', 'paused']);
      expect(JSON.parse(firstPart[2].data).event.kind).toBe('confirmation_requested');
      expect(JSON.parse(firstPart[3].data)).toEqual({ seq: 4, type: 'paused', pending_call_ids: ['call-t'] });
      expect((await t.get(`/runs/${run_id}`)).body).toMatchObject({ status: 'paused', pending_call_ids: ['call-t'] });

      const wrongValue = await t.post(`/runs/${run_id}/confirmations/call-t`, { confirmed: 'yes' });
      expect(wrongValue.status).toBe(400);
      expect(wrongValue.body).toEqual({ ...BAD_REQUEST, details: { field: 'confirmed' } });
      const wrongCall = await t.post(`/runs/${run_id}/confirmations/call-x`, { confirmed: true });
      expect(wrongCall.status).toBe(404);
      expect(wrongCall.body).toEqual({ ...NOT_FOUND, code: 'invocation_not_found' });
      expect(contexts).toHaveLength(0);

      const accepted = await t.post(`/runs/${run_id}/confirmations/call-t`, { confirmed: true, payload: { approver: 'ann' } });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toMatchObject({ run_id, status: 'running', pending_call_ids: [] });
      await stream.ended;
      const rest = stream.items().slice(4);
      expect(rest.map((item) => item.type)).toEqual(['resumed', 'event', 'event', 'terminal']);
      expect(rest.slice(1, 3).map((item) => item.event.kind)).toEqual(['tool_response', 'final_output']);
      expect(rest.at(-1)).toEqual({ seq: 8, type: 'terminal', status: 'completed' });
      expect(contexts).toHaveLength(1);
      expect(contexts[0].confirmation).toEqual({ confirmed: true, payload: { approver: 'ann' } });

      const late = await t.post(`/runs/${run_id}/confirmations/call-t`, { confirmed: true });
      expect(late.status).toBe(409);
      expect(late.body).toEqual({ status_code: 409, error: 'Conflict', code: 'run_not_active', details: { status: 'completed' } });
    });

    it('cancelling a paused run clears its continuation: a direct resume no longer finds it', async () => {
      const { agent } = transferAgent();
      const t = await startApp(agent);
      const { run_id, session_id } = await t.startRun();
      const record = await t.waitForStatus(run_id, 'paused');
      const cancelled = await t.post(`/runs/${run_id}/cancel`, { reason: 'declined' });
      expect(cancelled.status).toBe(202);
      expect(cancelled.body).toMatchObject({ status: 'cancelled' });
      expect(t.registry.getRunner(AGENT)).toBe(t.runner);
      await expect(t.runner.resume({ userId: USER, sessionId: session_id, invocationId: record.invocation_id, callId: 'call-t', confirmed: true })).rejects.toMatchObject({
        code: 'invocation_not_found',
      });
    });
  });

  describe('error answers', () => {
    it.each([
      ['an unknown key', { agent: AGENT, message: 'hi', extra_key: 1 }, { unknown_fields: 1 }],
      ['a bad session id', { agent: AGENT, message: 'hi', session_id: 'has space' }, { field: 'session_id' }],
      ['a user id (the principal is the user)', { agent: AGENT, user_id: USER, message: 'hi' }, { unknown_fields: 1 }],
      ['a message that is no Content', { agent: AGENT, message: { role: 'model', parts: [] } }, { field: 'message' }],
      ['a non-boolean durable', { agent: AGENT, message: 'hi', durable: 'yes' }, { field: 'durable' }],
      ['a JSON array', [1, 2], { field: 'body' }],
    ])('POST /runs with %s is 400 invalid_run_request', async (_what, body, details) => {
      const t = await startApp(lookupAgent(new Gate()).agent);
      const answer = await t.post('/runs', body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ ...BAD_REQUEST, details });
      expect(answer.text).not.toContain('extra_key');
      expect(answer.text).not.toContain('has space');
    });

    it('bad cancel bodies and replay positions are 400 invalid_run_request', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const { run_id } = await t.startRun();
      expect((await t.post(`/runs/${run_id}/cancel`, { reason: '' })).body).toEqual({ ...BAD_REQUEST, details: { field: 'reason' } });
      expect((await t.post(`/runs/${run_id}/cancel`, { reason: 'x'.repeat(129) })).body).toEqual({ ...BAD_REQUEST, details: { field: 'reason' } });
      expect((await t.post(`/runs/${run_id}/cancel`, { reason: 'ok', why: 1 })).body).toEqual({ ...BAD_REQUEST, details: { unknown_fields: 1 } });
      expect((await t.post(`/runs/${run_id}/confirmations/call-1`, {})).body).toEqual({ ...BAD_REQUEST, details: { field: 'confirmed' } });
      const badHeader = await t.sse(`/runs/${run_id}/events`, { 'Last-Event-ID': 'abc' });
      expect(badHeader.status).toBe(400);
      expect(await badHeader.json()).toEqual({ ...BAD_REQUEST, details: { field: 'last_event_id' } });
      const badQuery = await t.sse(`/runs/${run_id}/events?after_seq=-1`);
      expect(await badQuery.json()).toEqual({ ...BAD_REQUEST, details: { field: 'after_seq' } });
      const ahead = await t.sse(`/runs/${run_id}/events?after_seq=99`);
      expect(await ahead.json()).toEqual({ ...BAD_REQUEST, details: { field: 'after_seq' } });
      expect((await t.get(`/runs/${run_id}`)).body.status).not.toBe('cancelled');
    });

    it('unknown runs and agents are 404', async () => {
      const t = await startApp(lookupAgent(new Gate()).agent);
      const runNotFound = { ...NOT_FOUND, code: 'run_not_found' };
      expect(await t.get('/runs/run-nope')).toMatchObject({ status: 404, body: runNotFound });
      expect(await t.get('/runs/%00')).toMatchObject({ status: 404, body: runNotFound });
      expect(await t.post('/runs/run-nope/cancel', {})).toMatchObject({ status: 404, body: runNotFound });
      expect(await t.post('/runs/run-nope/confirmations/call-1', { confirmed: true })).toMatchObject({ status: 404, body: runNotFound });
      const events = await t.sse('/runs/run-nope/events');
      expect(events.status).toBe(404);
      expect(await events.json()).toEqual(runNotFound);
      expect(await t.post('/runs', { agent: 'nobody', message: 'hi' })).toMatchObject({ status: 404, body: { ...NOT_FOUND, code: 'agent_not_found' } });
    });

    it('a full registry is 503 run_capacity_reached {limit} with Retry-After', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent, { registry: { maxRuns: 1 } });
      await t.startRun();
      const refused = await t.http.send('/runs', { method: 'POST', body: { agent: AGENT, message: 'hi' } }).result;
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body).toEqual({ status_code: 503, error: 'Service Unavailable', code: 'run_capacity_reached', details: { limit: 1 } });
    });
  });

  describe('shutdown and readiness', () => {
    it('app.close() cancels executing runs with reason shutdown; readiness goes down', async () => {
      const gate = new Gate();
      const t = await startApp(lookupAgent(gate).agent);
      const health = t.app.get(RunsHealthIndicator);
      expect(health.isHealthy()).toEqual({ runs: { status: 'up', accepting: true, active: 0 } });
      const { run_id } = await t.startRun();
      await waitFor(() => gate.entered, 'the gated model call');
      expect(health.isHealthy()).toEqual({ runs: { status: 'up', accepting: true, active: 1 } });
      t.http.destroyAll();
      open.splice(open.indexOf(t), 1);
      await t.app.close();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'shutdown' } } });
      expect(gate.signal?.aborted).toBe(true);
      expect(health.isHealthy()).toEqual({ runs: { status: 'down', accepting: false, active: 0 } });
    });
  });
});

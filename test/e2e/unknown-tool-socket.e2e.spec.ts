/**
 * A tool name the model makes up never reaches what the app records or shows (issue 22, item 6), over
 * a real socket: a Nest app with `RunsModule`, the Postgres audit log, `GET /traces` and the console,
 * its Runner driven by a model that calls a canary name the agent does not declare. The canary is in
 * no audit row, trace record, span, log line or console snapshot; the decision's subject is `unknown_tool`.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { trace } from '@opentelemetry/api';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { ConsoleModule } from '../../src/observability/console/console.module';
import { AuditSink } from '../../src/policy/audit-log/audit-sink';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { RuntimePolicyModule } from '../../src/policy/runtime-policy.module';
import type { Tool } from '../../src/runner/agent.types';
import { ScriptedModel } from '../../src/runner/models/scripted-model';
import { Runner } from '../../src/runner/runner';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { SpanRecorder } from '../../src/runner/tracing/otel/testing/tracing-harness';
import { InMemorySessionService } from '../../src/services/sessions/in-memory-session-service';
import { TraceStore } from '../../src/trace/trace-store';
import { TraceStoreModule } from '../../src/trace/trace-store.module';
import { eventually } from '../support/eventually';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { bearerPrincipal } from '../support/run-ownership';
import { RecordingLogger } from './support/harness';
import { HttpClient } from './support/http-client';
import { SseConnection } from './support/sse-client';

const CANARY = 'CANARY-invented-tool-7f3a1c';
const INVENTED = `user ssn ${CANARY}`;
const AS_ALICE = { authorization: 'Bearer alice-token' };

const search: Tool = { name: 'search', execute: () => ({ hits: ['runbook'] }) };

describe('a made-up tool name over HTTP (issue 22, item 6)', () => {
  let database: FreshDatabase;
  let app: INestApplication;
  let http: HttpClient;
  const logger = new RecordingLogger();
  const spans = new SpanRecorder();

  beforeAll(async () => {
    database = await createFreshDatabase();
    trace.setGlobalTracerProvider(spans.provider);
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(database.url), retryAttempts: 0 }),
        RuntimePolicyModule.forRoot({ policy: { agents: { allow: 'all' }, tools: { allow: ['search'] } }, auditLog: 'postgres' }),
        TraceStoreModule.forRoot({ resolvePrincipal: bearerPrincipal }),
        RunsModule.forRootAsync({
          inject: [RuntimePolicy, AuditSink, TraceStore],
          useFactory: (policy: RuntimePolicy, auditSink: AuditSink, store: TraceStore) => ({
            runners: [
              new Runner({
                appName: 'canary-app',
                agent: {
                  name: 'improviser',
                  tools: [search],
                  model: new ScriptedModel([{ toolCalls: [{ id: 'c1', name: INVENTED, args: {} }, { id: 'c2', name: 'search', args: {} }] }, { text: 'done' }]),
                },
                sessionService: new InMemorySessionService(),
                runtimePolicy: policy,
                auditSink,
                traceStore: { store, principal: 'alice' },
              }),
            ],
            resolvePrincipal: bearerPrincipal,
          }),
        }),
        ConsoleModule.forRoot({ path: '/console', resolvePrincipal: bearerPrincipal, mayViewDenials: () => true }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
    http = new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    await app?.close();
    trace.disable();
    await database?.drop();
  });

  it('reaches no audit row, trace record, span, log line or console snapshot; the subject is unknown_tool', async () => {
    const started = await http.send('/runs', { method: 'POST', body: { agent: 'improviser', message: 'look it up' }, headers: AS_ALICE }).result;
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await eventually(async () => (await http.send(`/runs/${runId}`, { headers: AS_ALICE }).result).body.status === 'completed', 10_000, 'the run completes');

    const client = new Client({ connectionString: database.url });
    await client.connect();
    const rows = (await client.query('SELECT subject, decision_json FROM agent_runtime_policy_audit_log ORDER BY seq')).rows as Array<{ subject: string; decision_json: string }>;
    await client.end();
    expect(rows.map((row) => row.subject)).toEqual(['unknown_tool']);
    expect(JSON.parse(rows[0].decision_json)).toMatchObject({ subject: 'unknown_tool', subject_digest: expect.stringMatching(/^[0-9a-f]{16}$/) });

    const traces = await http.send('/traces', { headers: AS_ALICE }).result;
    expect(traces.status).toBe(200);
    const traceText = JSON.stringify(traces.body);
    expect(traceText).toContain('unknown_tool');

    const consoleStream = await SseConnection.open(http.baseUrl, '/console/events', AS_ALICE);
    let snapshot: string;
    try {
      snapshot = (await consoleStream.waitForMessages(1))[0].data;
    } finally {
      consoleStream.close();
    }
    expect(JSON.parse(snapshot).denials).toMatchObject({ items: [expect.objectContaining({ subject: 'unknown_tool' })] });

    const spanText = JSON.stringify(spans.spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })));
    expect(spans.spans.length).toBeGreaterThan(0);
    const logText = JSON.stringify(logger.entries);
    for (const [where, text] of Object.entries({ rows: JSON.stringify(rows), traces: traceText, console: snapshot, spans: spanText, logs: logText })) {
      expect({ where, leaked: text.includes(CANARY) }).toEqual({ where, leaked: false });
    }
  });
});

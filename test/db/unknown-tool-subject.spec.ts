/**
 * A tool name the model makes up is model content (issue 22, item 6): it reaches no audit row, trace
 * record, span, log line or console snapshot. The Runner, on a real Postgres audit log, a trace store
 * and an OpenTelemetry provider, is driven by a scripted model that calls a canary name the agent does
 * not declare, beside a declared tool the policy denies (its name is configuration and stays).
 */
import type { DataSource } from 'typeorm';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { recentDenials } from '../../src/observability/console/audit-denials';
import { PostgresAuditLog } from '../../src/policy/audit-log/postgres-audit-log';
import { AUDIT_HEAD_TABLE, AUDIT_LOG_TABLE } from '../../src/policy/audit-log/audit-log.constants';
import { canonicalJson } from '../../src/json';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { sha256Hex } from '../../src/shared/text/sha256';
import { openTelemetryTracing } from '../../src/runner/tracing/otel/open-telemetry-tracing';
import { SpanRecorder } from '../../src/runner/tracing/otel/testing/tracing-harness';
import { canary, countingTool, makeRunner, Observers, ofKind, scriptedAgent, storedEvents, USER } from '../../src/runner/testing/runner-harness';
import { TraceStore } from '../../src/trace/trace-store';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Every line written to stdout, stderr or the console while `work` runs (the Nest logger writes there). */
async function capturedOutput(work: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const capture = (chunk: unknown) => void lines.push(String(chunk));
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (capture(chunk), true)),
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (capture(chunk), true)),
    ...(['log', 'info', 'warn', 'error', 'debug'] as const).map((method) => jest.spyOn(console, method).mockImplementation((...args) => capture(args.join(' ')))),
  ];
  try {
    await work();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
}

describe('a tool name the model made up is never recorded (issue 22, item 6)', () => {
  let database: FreshDatabase;
  let dataSource: DataSource;
  let auditLog: PostgresAuditLog;

  beforeEach(async () => {
    database = await createFreshDatabase();
    dataSource = await createAgentRuntimeDataSource(database.url).initialize();
    auditLog = new PostgresAuditLog(dataSource);
    await auditLog.init();
  });

  afterEach(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it('appears in no audit row, trace record, span, log line or console snapshot; a declared denied tool keeps its name', async () => {
    const secret = canary();
    const invented = `user ssn ${secret}`;
    const digest = sha256Hex(invented).slice(0, 16);
    const observers = new Observers();
    const store = new TraceStore();
    const recorder = new SpanRecorder();
    const search = countingTool('search');
    const shell = countingTool('shell');
    const sinks = { auditSink: auditLog, traceStore: { store }, tracing: openTelemetryTracing({ tracerProvider: recorder.provider }), logger: observers.logger, events: observers.events };
    // denies: the made-up name (in no allow list) and the declared `shell`
    const denying = makeRunner({
      agent: scriptedAgent(
        [{ toolCalls: [{ id: 'c1', name: invented, args: {} }, { id: 'c2', name: 'shell', args: {} }, { id: 'c3', name: 'search', args: {} }] }, { toolCalls: [{ id: 'c4', name: invented, args: {} }] }, { text: 'done' }],
        { tools: [search.tool, shell.tool] },
      ),
      runtimePolicy: RuntimePolicy.compile({ agents: { allow: 'all' }, tools: { allow: ['search'], deny: ['shell'] } }, { events: observers.events }),
      ...sinks,
    });
    // allows every name: the made-up one is answered tool_not_found, with no decision to record
    const allowing = makeRunner({
      agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: invented, args: {} }] }, { text: 'done' }], { tools: [search.tool] }),
      runtimePolicy: { agents: { allow: 'all' }, tools: { allow: 'all' } },
      ...sinks,
    });

    const output = await capturedOutput(async () => {
      expect((await denying.run({ userId: USER, sessionId: 'ses-denying', message: 'go' })).status).toBe('completed');
      expect((await allowing.run({ userId: USER, sessionId: 'ses-allowing', message: 'go' })).status).toBe('completed');
      await settle();
      await settle();
    });
    expect(search.executions).toHaveLength(1);
    expect(shell.executions).toHaveLength(0);
    // the name did flow: the model's own turn in the session holds it (content, where it belongs)
    expect(JSON.stringify(ofKind(await storedEvents(denying, 'ses-denying'), 'model_turn'))).toContain(secret);

    // the audit log: the marker and the digest, twice for the repeated name; `shell` as it is
    const rows = (await dataSource.query(`SELECT * FROM ${AUDIT_LOG_TABLE} ORDER BY seq`)) as Array<Record<string, string>>;
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.map((row) => [row.operation, row.subject, row.reason])).toEqual([
      ['tool_call', 'unknown_tool', 'not_allowed'],
      ['tool_call', 'shell', 'explicitly_denied'],
      ['tool_call', 'unknown_tool', 'not_allowed'],
    ]);
    const stored = rows.map((row) => JSON.parse(row.decision_json) as Record<string, unknown>);
    expect(stored.map((decision) => [decision.schema_version, decision.subject, decision.subject_digest])).toEqual([
      [2, 'unknown_tool', digest],
      [2, 'shell', null],
      [2, 'unknown_tool', digest],
    ]);
    expect(await auditLog.verifyChain()).toMatchObject({ ok: true, rows_checked: 3 });

    // trace records: the marker and the same digest, whether the call was denied or not found
    const records = store.query('local-runtime', 'all').events;
    expect(JSON.stringify(records)).not.toContain(secret);
    const toolCalls = records.filter((record) => record.event.event === 'runner.tool.call').map((record) => record.event as { metadata: Record<string, string>; attributes: Record<string, string> });
    expect(toolCalls.map(({ metadata, attributes }) => [metadata.tool, metadata.tool_digest, attributes.outcome])).toEqual([
      ['unknown_tool', digest, 'denied'],
      ['shell', undefined, 'denied'],
      ['search', undefined, 'executed'],
      ['unknown_tool', digest, 'denied'],
      ['unknown_tool', digest, 'not_found'],
    ]);

    // spans: a made-up name names no span; the denial's decision id leads to the audit row
    expect(recorder.serialized()).not.toContain(secret);
    const toolSpans = recorder.byOperation('execute_tool');
    expect(toolSpans.map((span) => [span.name, span.attributes['gen_ai.tool.name']])).toEqual([
      ['execute_tool', undefined],
      ['execute_tool shell', 'shell'],
      ['execute_tool search', 'search'],
      ['execute_tool', undefined],
      ['execute_tool', undefined],
    ]);
    expect(toolSpans[0].events.map((event) => event.attributes?.['agent_runtime.policy.decision_id'])).toEqual([rows[0].decision_id]);

    // logs: the Runner's logger, and whatever reached stdout, stderr or the console
    expect(JSON.stringify({ runner: observers.logLines, output })).not.toContain(secret);
    expect(observers.text()).not.toContain(secret);

    // the console's denial list: the marker with its digest, newest first
    const denials = await recentDenials(dataSource, 50);
    expect(JSON.stringify(denials)).not.toContain(secret);
    expect(denials.status === 'ok' && denials.items.map((item) => [item.subject, item.subject_digest])).toEqual([
      ['unknown_tool', digest],
      ['shell', null],
      ['unknown_tool', digest],
    ]);
  });

  it('rows of decision schema 1, written before subject_digest, still verify beside schema 2 rows and show no digest', async () => {
    const policy = RuntimePolicy.compile({ agents: { allow: 'all' }, tools: { deny: ['shell'] } });
    const { decision_digest: _digest, subject_digest: _subjectDigest, approved_by: _approvedBy, ...rest } = policy.checkTool('shell', {});
    const record = { ...rest, schema_version: 1 };
    const old = { ...record, decision_digest: sha256Hex(canonicalJson(record)) };
    const json = canonicalJson(old);
    // appended the way the log appends (lock the head, chain the row, move the head)
    await dataSource.transaction(async (manager) => {
      const [head] = (await manager.query(`SELECT last_seq, last_hash FROM ${AUDIT_HEAD_TABLE} WHERE id = 1 FOR UPDATE`)) as Array<{ last_seq: string; last_hash: string }>;
      const rowHash = sha256Hex(head.last_hash + json);
      await manager.query(
        `INSERT INTO ${AUDIT_LOG_TABLE} (seq, decision_id, decided_at_ms, policy_id, operation, subject, outcome, reason, policy_fingerprint, decision_json, prev_hash, row_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [Number(head.last_seq) + 1, old.decision_id, old.decided_at_ms, old.policy_id, old.operation, old.subject, old.outcome, old.reason, old.policy_fingerprint, json, head.last_hash, rowHash],
      );
      await manager.query(`UPDATE ${AUDIT_HEAD_TABLE} SET last_seq = last_seq + 1, last_hash = $1 WHERE id = 1`, [rowHash]);
    });
    await auditLog.record(policy.checkUndeclaredTool('ghost', {}));

    expect(await auditLog.verifyChain()).toMatchObject({ ok: true, rows_checked: 2 });
    const denials = await recentDenials(dataSource, 50);
    expect(denials.status === 'ok' && denials.items.map((item) => [item.subject, item.subject_digest])).toEqual([
      ['unknown_tool', sha256Hex('ghost').slice(0, 16)],
      ['shell', null],
    ]);
  });
});

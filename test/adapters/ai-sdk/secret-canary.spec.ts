import { randomBytes } from 'node:crypto';
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import type { DataSource } from 'typeorm';
import { guardTools, isToolDenial, runtimeSafetyMiddleware } from '../../../src/adapters/ai-sdk';
import { createAgentRuntimeDataSource } from '../../../src/database/data-source.factory';
import type { AuditSink } from '../../../src/policy/audit-log/audit-sink';
import { PostgresAuditLog } from '../../../src/policy/audit-log/postgres-audit-log';
import { RuntimePolicy } from '../../../src/policy/runtime-policy';
import type { PolicyDecision } from '../../../src/policy/runtime-policy.types';
import { createFreshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { CapturingSink, scriptedModel, textTurn, toolTurn } from '../../../src/adapters/ai-sdk/testing/ai-sdk-fixtures';

const policy = RuntimePolicy.compile({
  id: 'ai-sdk-canary',
  agents: { allow: ['support'] },
  tools: { allow: ['search'], deny: ['shell'] },
  maxArgumentBytes: 512,
  maxContentBytes: 256,
});
const anyInput = jsonSchema<Record<string, unknown>>({ type: 'object' });

/** Everything observable a failure carries: message, details, own enumerable fields, string form. */
const errorText = (error: unknown): string => {
  const e = error as { message?: unknown; details?: unknown; stack?: unknown };
  return [String(error), String(e.message), JSON.stringify(e.details ?? null), JSON.stringify(error), String(e.stack)].join('\n');
};

describe('a canary secret in arguments, results, input and output reaches no decision, audit row or error (spec 02 §10.4)', () => {
  const canary = `canary-${randomBytes(16).toString('hex')}`;
  let database: FreshDatabase;
  let dataSource: DataSource;
  let log: PostgresAuditLog;

  beforeAll(async () => {
    database = await createFreshDatabase();
    dataSource = await createAgentRuntimeDataSource(database.url).initialize();
    log = new PostgresAuditLog(dataSource);
    await log.init();
  });

  afterAll(async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.drop();
  });

  it('keeps it out of every decision, every row of the Postgres audit log, the capturing sink and every error', async () => {
    const decisions: PolicyDecision[] = [];
    const captured = new CapturingSink();
    const sink: AuditSink = {
      async record(decision) {
        await log.record(decision);
        await captured.record(decision);
      },
    };
    const onDecision = (decision: PolicyDecision) => decisions.push(decision);
    const errors: unknown[] = [];
    const tools = guardTools(
      {
        shell: tool({ inputSchema: anyInput, execute: async () => canary }),
        search: tool({ inputSchema: anyInput, execute: async ({ q }) => ({ leaked: canary, q, padding: 'p'.repeat(300) }) }),
      },
      { policy, auditSink: sink, onDecision },
    );
    const model = (...turns: Parameters<typeof scriptedModel>) =>
      wrapLanguageModel({ model: scriptedModel(...turns), middleware: runtimeSafetyMiddleware({ policy, agent: 'support', auditSink: sink, onDecision }) });

    // a denied tool, an over-budget argument, a non-JSON argument keyed by the secret, an over-budget result, then an over-budget final output
    const loop = model(
      toolTurn(
        { id: 'c1', name: 'shell', input: { cmd: `cat ${canary}` } },
        { id: 'c2', name: 'search', input: { q: canary.repeat(20) } },
        { id: 'c3', name: 'search', input: { q: canary } },
      ),
      textTurn(`${canary} `.repeat(10)),
    );
    errors.push(await generateText({ model: loop, tools, prompt: `my secret is ${canary}`, stopWhen: stepCountIs(3) }).catch((e: unknown) => e));
    const direct = await Promise.resolve(tools.search.execute!({ [canary]: () => canary }, { toolCallId: 'c4', messages: [], context: {} })).catch((e: unknown) => e);
    // an input over budget, and an agent the policy does not know
    errors.push(await generateText({ model: model(textTurn('never')), prompt: canary.repeat(20) }).catch((e: unknown) => e));
    const stranger = wrapLanguageModel({ model: scriptedModel(textTurn('never')), middleware: runtimeSafetyMiddleware({ policy, agent: 'stranger', auditSink: sink, onDecision }) });
    errors.push(await generateText({ model: stranger, prompt: canary }).catch((e: unknown) => e));

    const reasons = decisions.filter((d) => d.outcome === 'deny').map((d) => `${d.operation}:${d.reason}`);
    expect(reasons).toEqual([
      'tool_call:explicitly_denied',
      'tool_call:argument_budget_exceeded',
      'content:content_budget_exceeded',
      'content:content_budget_exceeded',
      'tool_call:invalid_arguments',
      'agent_invocation:content_budget_exceeded',
      'agent_invocation:not_allowed',
    ]);
    expect(isToolDenial(direct)).toBe(true);
    expect(direct).toMatchObject({ code: 'runtime_policy_denied', details: { reason: 'invalid_arguments' } });
    expect(errorText(direct)).not.toContain(canary);
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['runtime_policy_denied', 'runtime_policy_denied', 'runtime_policy_denied']);

    expect(JSON.stringify(decisions)).not.toContain(canary);
    expect(JSON.stringify(captured.decisions)).not.toContain(canary);
    expect(captured.decisions).toHaveLength(7);
    for (const error of errors) expect(errorText(error)).not.toContain(canary);
    const rows: Array<{ row: string }> = await dataSource.query('SELECT row_to_json(l)::text AS row FROM agent_runtime_policy_audit_log l ORDER BY seq');
    expect(rows).toHaveLength(7);
    for (const { row } of rows) expect(row).not.toContain(canary);
    expect(await log.verifyChain()).toMatchObject({ ok: true, rows_checked: 7 });
  });

  it('fails closed with a content-free error when the Postgres audit log cannot store the denial', async () => {
    const broken = await createAgentRuntimeDataSource(database.url).initialize();
    const brokenLog = new PostgresAuditLog(broken);
    await brokenLog.init();
    await broken.destroy();
    const execute = jest.fn(async () => canary);
    const tools = guardTools({ shell: tool({ inputSchema: anyInput, execute }) }, { policy, auditSink: brokenLog });
    const error = await generateText({ model: scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: canary } }), textTurn('ok')), tools, prompt: canary, stopWhen: stepCountIs(3) }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'runtime_policy_audit_persistence_failed', details: { target: 'audit_sink' } });
    expect(errorText(error)).not.toContain(canary);
    expect(execute).not.toHaveBeenCalled();
  });
});

/**
 * HTTP end-to-end tests of the policy audit trail (spec 02 §8 "Interceptor flow"): which decisions
 * reach the `AuditSink`, that they are recorded before the handler runs or the result is sent, and
 * that a failed or hung sink fails the request closed with 503.
 */
import { summarizeDecision } from '../../src/policy/policy-decision';
import { AuditSink } from '../../src/policy/audit-log/audit-sink';
import type { HttpResult } from './support/http-client';
import { settleTime, waitFor } from './support/harness';
import {
  argsOfSize,
  ARG_LIMIT,
  BODY_CANARY,
  DECISION_ID,
  expectNowhere,
  RecordingSink,
  RESULT_CANARY,
  usePolicyApps,
  type PolicyApp,
} from './support/policy-harness';

const UNAVAILABLE = { status_code: 503, error: 'Service Unavailable', code: 'runtime_policy_audit_persistence_failed' };

/** The error lines the interceptor wrote about the sink. */
const sinkErrors = (t: PolicyApp): string[] => t.logger.ofLevel('error').filter((line) => line.includes('decision-'));

describe('runtime policy audit sink over HTTP', () => {
  const start = usePolicyApps();

  describe("auditDecisions: 'deny' (default)", () => {
    it('records every denial and no allow; the recorded decision is the one summarised to the client', async () => {
      const sink = new RecordingSink();
      const t = await start({ moduleOptions: { auditLog: sink } });
      expect(t.app.get(AuditSink)).toBe(sink);

      expect((await t.post('/p/agents/helper', { prompt: 'ok' })).status).toBe(200);
      expect((await t.post('/p/tools/search', { q: 'ok' })).status).toBe(200);
      expect(sink.decisions).toEqual([]);

      const agent = await t.post('/p/agents/stranger', { prompt: BODY_CANARY });
      const tool = await t.post('/p/tools/shell', { cmd: BODY_CANARY });
      const budget = await t.post('/p/tools/search', argsOfSize(ARG_LIMIT + 1));
      t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
      const output = await t.post('/p/agents/helper', {});
      expect([agent.status, tool.status, budget.status, output.status]).toEqual([403, 403, 413, 413]);

      expect(sink.decisions).toHaveLength(4);
      expect(sink.decisions.every((d) => d.outcome === 'deny')).toBe(true);
      expect(sink.decisions.map(summarizeDecision)).toEqual([agent, tool, budget, output].map((result) => result.body.decision));
      expect(sink.steps.filter((s) => s.step === 'done')).toHaveLength(4);
      const stored = JSON.stringify(sink.decisions);
      expect(stored).not.toContain(BODY_CANARY);
      expect(stored).not.toContain(RESULT_CANARY);
    });

    it('never calls the sink for allowed calls, so a broken sink does not affect them', async () => {
      const sink = new RecordingSink();
      sink.fallback = 'reject';
      const t = await start({ moduleOptions: { auditLog: sink, auditDecisions: 'deny' } });
      const result = await t.post('/p/agents/helper', { prompt: 'ok' });
      expect(result.status).toBe(200);
      expect(sink.decisions).toEqual([]);
    });
  });

  describe("auditDecisions: 'all'", () => {
    it('records exactly one decision per check: input and output of an allowed call, the input of a denied one', async () => {
      const sink = new RecordingSink();
      const t = await start({ moduleOptions: { auditLog: sink, auditDecisions: 'all' } });

      expect((await t.post('/p/agents/helper', { prompt: 'ok' })).status).toBe(200);
      expect(sink.decisions.map((d) => [d.operation, d.subject, d.outcome])).toEqual([
        ['agent_invocation', 'helper', 'allow'],
        ['content', 'model_output', 'allow'],
      ]);

      expect((await t.post('/p/tools/search', { q: 'ok' })).status).toBe(200);
      const denied = await t.post('/p/agents/stranger', { prompt: 'no' });
      expect(denied.status).toBe(403);
      t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
      const outputDenied = await t.post('/p/tools/search', {});
      expect(outputDenied.status).toBe(413);

      expect(sink.decisions.map((d) => [d.operation, d.subject, d.outcome])).toEqual([
        ['agent_invocation', 'helper', 'allow'],
        ['content', 'model_output', 'allow'],
        ['tool_call', 'search', 'allow'],
        ['content', 'tool_result', 'allow'],
        ['agent_invocation', 'stranger', 'deny'],
        ['tool_call', 'search', 'allow'],
        ['content', 'tool_result', 'deny'],
      ]);
      expect(new Set(sink.decisions.map((d) => d.decision_id)).size).toBe(7);
      expect(summarizeDecision(sink.decisions[4])).toEqual(denied.body.decision);
      expect(summarizeDecision(sink.decisions[6])).toEqual(outputDenied.body.decision);
    });

    it('awaits the input record before the handler runs and the output record before the client gets the result', async () => {
      const sink = new RecordingSink();
      sink.behaviour.set(0, 'gate').set(1, 'gate');
      const t = await start({ moduleOptions: { auditLog: sink, auditDecisions: 'all' } });
      const call = t.http.send('/p/agents/helper', { method: 'POST', body: { prompt: 'wait' } });

      await waitFor(() => sink.pending() === 1, 'the input decision to be recorded');
      await settleTime(100);
      expect(t.probe.ran).toEqual([]);
      sink.release();

      await waitFor(() => sink.pending() === 1, 'the output decision to be recorded');
      expect(t.probe.ran).toEqual(['agents/helper']);
      await settleTime(100);
      expect(call.settled()).toBe(false);
      sink.release();

      expect((await call.result).status).toBe(200);
      expect(sink.steps.map((s) => `${s.step}:${s.operation}`)).toEqual(['start:agent_invocation', 'done:agent_invocation', 'start:content', 'done:content']);
    });

    it('answers a denial only after its decision is recorded', async () => {
      const sink = new RecordingSink();
      sink.behaviour.set(0, 'gate');
      const t = await start({ moduleOptions: { auditLog: sink } });
      const call = t.http.send('/p/agents/stranger', { method: 'POST', body: { prompt: 'x' } });
      await waitFor(() => sink.pending() === 1, 'the denial to be recorded');
      await settleTime(100);
      expect(call.settled()).toBe(false);
      sink.release();
      expect((await call.result).status).toBe(403);
    });
  });

  describe('a failing sink fails closed with 503', () => {
    const expectUnavailable = (result: HttpResult) => {
      expect({ status: result.status, body: result.body }).toEqual({ status: 503, body: UNAVAILABLE });
      expect(result.headers['retry-after']).toBe('1');
    };

    it('refuses an allowed request whose input record is rejected; the handler does not run and the log names only the decision id', async () => {
      const sink = new RecordingSink();
      sink.fallback = 'reject';
      const t = await start({ moduleOptions: { auditLog: sink, auditDecisions: 'all' } });
      const result = await t.post('/p/agents/helper', { prompt: BODY_CANARY });
      expectUnavailable(result);
      expect(t.probe.ran).toEqual([]);
      expect(sink.decisions).toHaveLength(1);

      const id = sink.decisions[0].decision_id;
      const errors = sinkErrors(t);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(id);
      // the only identifier in the line is the decision id: no content, sink error, subject or policy
      expect(errors[0].match(/decision-[0-9a-f-]+/g)).toEqual([id]);
      for (const secret of [BODY_CANARY, RecordingSink.ERROR_CANARY, 'hunter2', 'helper', 'e2e-policy', sink.decisions[0].decision_digest]) {
        expect(errors[0]).not.toContain(secret);
      }
      expectNowhere(BODY_CANARY, result, t);
      expectNowhere('hunter2', result, t);
    });

    it('refuses a denial whose record is rejected with 503 instead of 403: a denial is never lost silently', async () => {
      const sink = new RecordingSink();
      sink.fallback = 'reject';
      const t = await start({ moduleOptions: { auditLog: sink } });
      const result = await t.post('/p/tools/shell', { cmd: BODY_CANARY });
      expectUnavailable(result);
      expect(t.probe.ran).toEqual([]);
      expect(sinkErrors(t)).toEqual([expect.stringContaining(sink.decisions[0].decision_id)]);
      expectNowhere(BODY_CANARY, result, t);
    });

    it('treats a sink that throws synchronously like one that rejects', async () => {
      const sink = new RecordingSink();
      sink.behaviour.set(0, 'throw');
      const t = await start({ moduleOptions: { auditLog: sink } });
      const result = await t.post('/p/agents/stranger', { prompt: BODY_CANARY });
      expectUnavailable(result);
      expectNowhere('hunter2', result, t);
      // the sink recovers: the next denial is answered normally
      expect((await t.post('/p/agents/stranger', {})).status).toBe(403);
    });

    it('times out a hung sink after auditTimeoutMs: 503, the handler never runs', async () => {
      const sink = new RecordingSink();
      sink.fallback = 'hang';
      const t = await start({ moduleOptions: { auditLog: sink, auditDecisions: 'all', auditTimeoutMs: 100 } });
      const began = Date.now();
      const result = await t.post('/p/agents/helper', { prompt: BODY_CANARY });
      const elapsed = Date.now() - began;
      expectUnavailable(result);
      expect(elapsed).toBeGreaterThanOrEqual(90);
      expect(elapsed).toBeLessThan(3_000);
      await settleTime(50);
      expect(t.probe.ran).toEqual([]);
      const errors = sinkErrors(t);
      expect(errors).toHaveLength(1);
      expect(errors[0].match(/decision-[0-9a-f-]+/g)).toEqual([sink.decisions[0].decision_id]);
      expectNowhere(BODY_CANARY, result, t);
    });

    it('times out a hung sink on a denial too', async () => {
      const sink = new RecordingSink();
      sink.fallback = 'hang';
      const t = await start({ moduleOptions: { auditLog: sink, auditTimeoutMs: 100 } });
      const began = Date.now();
      const result = await t.post('/p/agents/stranger', {});
      expect(Date.now() - began).toBeLessThan(3_000);
      expectUnavailable(result);
    });

    it('replaces an allowed result with 503 when its output record fails; the raw result never reaches the client', async () => {
      const sink = new RecordingSink();
      sink.behaviour.set(1, 'reject');
      const t = await start({ moduleOptions: { auditLog: sink, auditDecisions: 'all' } });
      t.probe.returns({ reply: RESULT_CANARY });
      const result = await t.post('/p/tools/search', { q: 'x' });
      expectUnavailable(result);
      expect(t.probe.ran).toEqual(['tools/search']);
      expect(sink.decisions.map((d) => d.operation)).toEqual(['tool_call', 'content']);
      expect(sinkErrors(t)).toEqual([expect.stringContaining(sink.decisions[1].decision_id)]);
      expectNowhere(RESULT_CANARY, result, t);
    });

    it('replaces an output denial with 503 when its record hangs', async () => {
      const sink = new RecordingSink();
      sink.behaviour.set(0, 'hang');
      const t = await start({ moduleOptions: { auditLog: sink, auditTimeoutMs: 100 } });
      t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
      const began = Date.now();
      const result = await t.post('/p/agents/helper', {});
      expect(Date.now() - began).toBeLessThan(3_000);
      expectUnavailable(result);
      expect(sink.decisions.map((d) => [d.operation, d.outcome])).toEqual([['content', 'deny']]);
      expectNowhere(RESULT_CANARY, result, t);
    });
  });

  describe('without an audit log', () => {
    it('warns once at start-up that decisions are not persisted, and still enforces the policy', async () => {
      const t = await start({ moduleOptions: {} });
      const warnings = t.logger.ofLevel('warn').filter((line) => /auditLog|persist/i.test(line));
      expect(warnings).toHaveLength(1);
      expect((await t.post('/p/agents/stranger', {})).status).toBe(403);
      expect((await t.post('/p/agents/helper', {})).status).toBe(200);
    });

    it('does not warn when a sink is configured', async () => {
      const t = await start({ moduleOptions: { auditLog: new RecordingSink() } });
      expect(t.logger.ofLevel('warn').filter((line) => /auditLog|persist/i.test(line))).toEqual([]);
    });
  });

  it('uses decision ids of the documented form in recorded decisions', async () => {
    const sink = new RecordingSink();
    const t = await start({ moduleOptions: { auditLog: sink } });
    await t.post('/p/agents/stranger', {});
    expect(sink.decisions[0].decision_id).toMatch(DECISION_ID);
  });
});

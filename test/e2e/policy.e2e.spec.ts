/**
 * HTTP end-to-end tests of the runtime policy (spec 02 §4, §5, §8) through a real Nest app on a real
 * socket: allowed and denied agent and tool calls, byte budgets on input and output, default and
 * custom extractors. Audit, start-up, Postgres, telemetry and admission live in policy-*.e2e.spec.ts.
 */
import { canonicalJson } from '../../src/json';
import { verifyDecisionDigest, summarizeDecision } from '../../src/policy/policy-decision';
import type { HttpResult } from './support/http-client';
import {
  ARG_LIMIT,
  argsOfSize,
  BODY_CANARY,
  CONTENT_LIMIT,
  DECISION_ID,
  expectNowhere,
  RecordingSink,
  RESULT_CANARY,
  usePolicyApps,
  type PolicyApp,
} from './support/policy-harness';
import { DEFAULT_RESULT, EXTRACTOR_CANARY, trapSource } from './support/policy-routes';

/** The exact body of a denial. */
function denial(status: 403 | 413, operation: string, reason: string) {
  return {
    status_code: status,
    error: status === 413 ? 'Payload Too Large' : 'Forbidden',
    code: 'runtime_policy_denied',
    decision: { decision_id: expect.stringMatching(DECISION_ID), policy_id: 'e2e-policy', operation, outcome: 'deny', reason },
  };
}

function expectDenied(result: HttpResult, status: 403 | 413, operation: string, reason: string): void {
  expect({ status: result.status, body: result.body }).toEqual({ status, body: denial(status, operation, reason) });
  // exactly these keys, nothing else
  expect(Object.keys(result.body).sort()).toEqual(['code', 'decision', 'error', 'status_code']);
  expect(Object.keys(result.body.decision).sort()).toEqual(['decision_id', 'operation', 'outcome', 'policy_id', 'reason']);
  expect(result.headers['content-type']).toMatch(/^application\/json/);
}

describe('runtime policy over HTTP', () => {
  const start = usePolicyApps();
  let sink: RecordingSink;
  /** Every decision goes to the sink, so the tests can read what was measured. */
  const startApp = (): Promise<PolicyApp> => {
    sink = new RecordingSink();
    return start({ moduleOptions: { auditLog: sink, auditDecisions: 'all' } });
  };

  describe('allowed calls', () => {
    it('passes an allowed agent call: the handler runs once and its result reaches the client unchanged', async () => {
      const t = await startApp();
      const result = await t.post('/p/agents/helper', { prompt: 'hello' });
      expect(result.status).toBe(200);
      expect(result.body).toEqual(DEFAULT_RESULT);
      expect(result.text).toBe(JSON.stringify(DEFAULT_RESULT));
      expect(t.probe.ran).toEqual(['agents/helper']);
      expect(t.probe.bodies).toEqual([{ prompt: 'hello' }]);
      expect(sink.decisions.map((d) => [d.operation, d.subject, d.outcome, d.reason])).toEqual([
        ['agent_invocation', 'helper', 'allow', 'allowed'],
        ['content', 'model_output', 'allow', 'allowed'],
      ]);
    });

    it('passes an allowed tool call, and a plain string result is sent as is', async () => {
      const t = await startApp();
      const first = await t.post('/p/tools/search', { q: 'cats' });
      expect(first.status).toBe(200);
      expect(first.body).toEqual(DEFAULT_RESULT);

      t.probe.returns('plain answer ✓');
      const second = await t.post('/p/tools/search', { q: 'dogs' });
      expect(second.status).toBe(200);
      expect(second.text).toBe('plain answer ✓');
      expect(t.probe.ran).toEqual(['tools/search', 'tools/search']);
      expect(sink.decisions.map((d) => [d.operation, d.subject, d.outcome])).toEqual([
        ['tool_call', 'search', 'allow'],
        ['content', 'tool_result', 'allow'],
        ['tool_call', 'search', 'allow'],
        ['content', 'tool_result', 'allow'],
      ]);
    });

    it('passes async handlers and observable handlers emitting a value', async () => {
      const t = await startApp();
      t.probe.returns({ from: 'promise' });
      const promised = await t.post('/p/agents/helper/async', { prompt: 'p' });
      expect(promised.status).toBe(200);
      expect(promised.body).toEqual({ from: 'promise' });

      t.probe.emits({ from: 'observable' });
      const streamed = await t.post('/p/agents/helper/stream', { prompt: 'o' });
      expect(streamed.status).toBe(200);
      expect(streamed.body).toEqual({ from: 'observable' });

      t.probe.emits({ from: 'tool observable' });
      const tool = await t.post('/p/tools/search/stream', { q: 'o' });
      expect(tool.status).toBe(200);
      expect(tool.body).toEqual({ from: 'tool observable' });
      expect(t.probe.ran).toEqual(['agents/helper/async', 'agents/helper/stream', 'tools/search/stream']);
    });
  });

  describe('denied calls', () => {
    it('denies an agent in no allow list with 403 not_allowed; the handler never runs and the body is never echoed', async () => {
      const t = await startApp();
      const result = await t.post('/p/agents/stranger', { prompt: BODY_CANARY }, { 'x-note': 'header stays private' });
      expectDenied(result, 403, 'agent_invocation', 'not_allowed');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(BODY_CANARY, result, t);
      // the summary is the summary of the recorded decision
      expect(sink.decisions).toHaveLength(1);
      expect(result.body.decision).toEqual(summarizeDecision(sink.decisions[0]));
      expect(sink.decisions[0]).toMatchObject({ subject: 'stranger', budget: { kind: 'content', measured_bytes: null, limit_bytes: CONTENT_LIMIT } });
    });

    it('denies an explicitly denied tool with 403 explicitly_denied (deny beats allow)', async () => {
      const t = await startApp();
      const result = await t.post('/p/tools/shell', { cmd: `cat /etc/${BODY_CANARY}` });
      expectDenied(result, 403, 'tool_call', 'explicitly_denied');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(BODY_CANARY, result, t);
      expect(result.body.decision).toEqual(summarizeDecision(sink.decisions[0]));
    });

    it('denies an explicitly denied agent with 403 explicitly_denied', async () => {
      const t = await startApp();
      const result = await t.post('/p/agents/rogue', { prompt: BODY_CANARY });
      expectDenied(result, 403, 'agent_invocation', 'explicitly_denied');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(BODY_CANARY, result, t);
    });

    it('never reads the value of a denied subject: the extracted object getter is not called', async () => {
      const t = await startApp();
      trapSource.probe = t.probe;
      try {
        const denied = await t.post('/p/tools/shell/trap', {});
        expectDenied(denied, 403, 'tool_call', 'explicitly_denied');
        expect(t.probe.getterReads).toBe(0);
        // control: for an allowed tool the same value is measured (its getter is an accessor: invalid)
        const allowed = await t.post('/p/tools/calc/trap', {});
        expectDenied(allowed, 403, 'tool_call', 'invalid_arguments');
        expect(t.probe.ran).toEqual([]);
      } finally {
        trapSource.probe = undefined;
      }
    });

    it('gives every denial a new, increasing decision id', async () => {
      const t = await startApp();
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) ids.push((await t.post('/p/agents/stranger', { i })).body.decision.decision_id);
      expect(new Set(ids).size).toBe(4);
      expect([...ids].sort()).toEqual(ids);
    });
  });

  describe('byte budgets on the request', () => {
    it('answers 413 argument_budget_exceeded for tool arguments above maxArgumentBytes; the handler never runs', async () => {
      const t = await startApp();
      const result = await t.post('/p/tools/search', argsOfSize(ARG_LIMIT + 40, BODY_CANARY));
      expectDenied(result, 413, 'tool_call', 'argument_budget_exceeded');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(BODY_CANARY, result, t);
      expect(sink.decisions[0].budget).toMatchObject({ kind: 'arguments', limit_bytes: ARG_LIMIT });
      expect(sink.decisions[0].budget.measured_bytes).toBeGreaterThan(ARG_LIMIT);
    });

    it('answers 413 content_budget_exceeded for an agent input above maxContentBytes', async () => {
      const t = await startApp();
      const result = await t.post('/p/agents/helper', argsOfSize(CONTENT_LIMIT + 40, BODY_CANARY));
      expectDenied(result, 413, 'agent_invocation', 'content_budget_exceeded');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(BODY_CANARY, result, t);
    });

    it('is inclusive for tool arguments: exactly maxArgumentBytes passes, one byte more is 413', async () => {
      const t = await startApp();
      const atLimit = argsOfSize(ARG_LIMIT);
      expect(Buffer.byteLength(canonicalJson(atLimit))).toBe(ARG_LIMIT);
      const ok = await t.post('/p/tools/search', atLimit);
      expect(ok.status).toBe(200);
      expect(sink.decisions[0]).toMatchObject({ reason: 'allowed', budget: { kind: 'arguments', measured_bytes: ARG_LIMIT, limit_bytes: ARG_LIMIT } });

      const over = await t.post('/p/tools/search', argsOfSize(ARG_LIMIT + 1));
      expectDenied(over, 413, 'tool_call', 'argument_budget_exceeded');
      expect(sink.decisions[2]).toMatchObject({ reason: 'argument_budget_exceeded', budget: { measured_bytes: ARG_LIMIT + 1, limit_bytes: ARG_LIMIT } });
      expect(t.probe.ran).toEqual(['tools/search']);
    });

    it('is inclusive for agent input measured as UTF-8 bytes of a string: exactly maxContentBytes passes, one byte more is 413', async () => {
      const t = await startApp();
      // 'é' is two UTF-8 bytes: 63 × 'é' + 'a' + 'a' = 128 bytes
      const atLimit = 'é'.repeat(63) + 'aa';
      expect(Buffer.byteLength(atLimit)).toBe(CONTENT_LIMIT);
      const ok = await t.post('/p/agents/writer', { prompt: atLimit, other: 'not measured' });
      expect(ok.status).toBe(200);
      expect(sink.decisions[0].budget).toEqual({ kind: 'content', measured_bytes: CONTENT_LIMIT, limit_bytes: CONTENT_LIMIT });

      const over = await t.post('/p/agents/writer', { prompt: 'é'.repeat(63) + 'aaa' });
      expectDenied(over, 413, 'agent_invocation', 'content_budget_exceeded');
      // a two-byte character past the limit also exceeds it
      const overByMultibyte = await t.post('/p/agents/writer', { prompt: 'é'.repeat(63) + 'aé' });
      expectDenied(overByMultibyte, 413, 'agent_invocation', 'content_budget_exceeded');
      expect(t.probe.ran).toEqual(['agents/writer']);
    });
  });

  describe('checks on the handler result', () => {
    it('replaces an over-budget agent result with 413 content_budget_exceeded after the handler ran; the raw result never reaches the client', async () => {
      const t = await startApp();
      t.probe.returns({ reply: RESULT_CANARY + 'y'.repeat(CONTENT_LIMIT) });
      const result = await t.post('/p/agents/helper', { prompt: 'small' });
      expectDenied(result, 413, 'content', 'content_budget_exceeded');
      expect(t.probe.ran).toEqual(['agents/helper']);
      expectNowhere(RESULT_CANARY, result, t);
      expect(sink.decisions.map((d) => [d.operation, d.subject, d.reason])).toEqual([
        ['agent_invocation', 'helper', 'allowed'],
        ['content', 'model_output', 'content_budget_exceeded'],
      ]);
      expect(result.body.decision).toEqual(summarizeDecision(sink.decisions[1]));
    });

    it('replaces an over-budget tool result (checked as tool_result)', async () => {
      const t = await startApp();
      t.probe.returns(RESULT_CANARY.repeat(10));
      const result = await t.post('/p/tools/search', { q: 'x' });
      expectDenied(result, 413, 'content', 'content_budget_exceeded');
      expectNowhere(RESULT_CANARY, result, t);
      expect(sink.decisions[1]).toMatchObject({ subject: 'tool_result', budget: { kind: 'content', limit_bytes: CONTENT_LIMIT } });
    });

    it('is inclusive on the result: a result of exactly maxContentBytes is sent, one byte more is 413', async () => {
      const t = await startApp();
      const atLimit = 'r'.repeat(CONTENT_LIMIT);
      t.probe.returns(atLimit);
      const ok = await t.post('/p/agents/helper', {});
      expect(ok.status).toBe(200);
      expect(ok.text).toBe(atLimit);
      t.probe.returns(atLimit + 'r');
      const over = await t.post('/p/agents/helper', {});
      expectDenied(over, 413, 'content', 'content_budget_exceeded');
      expect(sink.decisions[3].budget).toEqual({ kind: 'content', measured_bytes: CONTENT_LIMIT + 1, limit_bytes: CONTENT_LIMIT });
    });

    it("denies a result that is not JSON-measurable with 403 invalid_content", async () => {
      const t = await startApp();
      t.probe.returns({ when: new Date(0), secret: RESULT_CANARY });
      const result = await t.post('/p/agents/helper', {});
      expectDenied(result, 403, 'content', 'invalid_content');
      expectNowhere(RESULT_CANARY, result, t);
    });

    it("checks an undefined handler result as '' (0 bytes): empty 200", async () => {
      const t = await startApp();
      t.probe.returns(undefined);
      const result = await t.post('/p/agents/helper', {});
      expect(result.status).toBe(200);
      expect(result.text).toBe('');
      expect(sink.decisions[1]).toMatchObject({ operation: 'content', outcome: 'allow', budget: { kind: 'content', measured_bytes: 0 } });
    });

    it('checks every value an observable handler emits: an over-budget value denies the response', async () => {
      const t = await startApp();
      t.probe.emits({ reply: RESULT_CANARY.repeat(8) });
      const single = await t.post('/p/agents/helper/stream', {});
      expectDenied(single, 413, 'content', 'content_budget_exceeded');
      expectNowhere(RESULT_CANARY, single, t);

      // an early over-budget value is not hidden by a small last value
      t.probe.emits({ reply: RESULT_CANARY.repeat(8) }, { reply: 'small' });
      const early = await t.post('/p/agents/helper/stream', {});
      expectDenied(early, 413, 'content', 'content_budget_exceeded');
      expectNowhere(RESULT_CANARY, early, t);

      t.probe.emits({ reply: RESULT_CANARY.repeat(8) });
      const tool = await t.post('/p/tools/search/stream', {});
      expectDenied(tool, 413, 'content', 'content_budget_exceeded');
      expectNowhere(RESULT_CANARY, tool, t);
      expect(t.probe.ran).toEqual(['agents/helper/stream', 'agents/helper/stream', 'tools/search/stream']);
    });
  });

  describe('extractors', () => {
    it("uses the body as agent input by default, and '' (0 bytes) when there is no body", async () => {
      const t = await startApp();
      const body = { prompt: 'hi', n: 1 };
      expect((await t.post('/p/agents/helper', body)).status).toBe(200);
      expect(sink.decisions[0].budget.measured_bytes).toBe(Buffer.byteLength(canonicalJson(body)));

      expect((await t.post('/p/agents/helper')).status).toBe(200);
      expect(sink.decisions[2]).toMatchObject({ operation: 'agent_invocation', outcome: 'allow', budget: { measured_bytes: 0 } });

      expect((await t.get('/p/agents/helper')).status).toBe(200);
      expect(sink.decisions[4]).toMatchObject({ operation: 'agent_invocation', outcome: 'allow', budget: { measured_bytes: 0 } });
      expect(t.probe.ran).toEqual(['agents/helper', 'agents/helper', 'agents/helper:get']);
    });

    it('uses the body as tool arguments by default, and {} (2 bytes) when there is no body', async () => {
      const t = await startApp();
      const body = { q: 'cats', page: 2 };
      expect((await t.post('/p/tools/search', body)).status).toBe(200);
      expect(sink.decisions[0].budget.measured_bytes).toBe(Buffer.byteLength(canonicalJson(body)));

      expect((await t.post('/p/tools/search')).status).toBe(200);
      expect(sink.decisions[2]).toMatchObject({ operation: 'tool_call', outcome: 'allow', budget: { kind: 'arguments', measured_bytes: 2 } });

      expect((await t.get('/p/tools/search')).status).toBe(200);
      expect(sink.decisions[4]).toMatchObject({ operation: 'tool_call', outcome: 'allow', budget: { kind: 'arguments', measured_bytes: 2 } });
    });

    it('uses a custom args extractor: only the extracted value is measured', async () => {
      const t = await startApp();
      const args = { a: 1, b: [2, 3] };
      // the whole body is far above the budget; the extracted args are not
      const result = await t.post('/p/tools/calc', { args, padding: 'p'.repeat(ARG_LIMIT * 4) });
      expect(result.status).toBe(200);
      expect(sink.decisions[0]).toMatchObject({ subject: 'calc', outcome: 'allow', budget: { measured_bytes: Buffer.byteLength(canonicalJson(args)) } });

      const tooBig = await t.post('/p/tools/calc', { args: argsOfSize(ARG_LIMIT + 1) });
      expectDenied(tooBig, 413, 'tool_call', 'argument_budget_exceeded');
    });

    it('uses a custom input extractor: a string prompt is measured as its UTF-8 bytes, and undefined is unmeasurable', async () => {
      const t = await startApp();
      const result = await t.post('/p/agents/writer', { prompt: 'héllo', padding: 'p'.repeat(CONTENT_LIMIT * 4) });
      expect(result.status).toBe(200);
      expect(sink.decisions[0].budget.measured_bytes).toBe(6);

      // the extractor yields undefined: not a JSON value
      const missing = await t.post('/p/agents/writer', { other: BODY_CANARY });
      expectDenied(missing, 403, 'agent_invocation', 'invalid_content');
      expectNowhere(BODY_CANARY, missing, t);
    });

    it('denies invalid_content when an agent input extractor throws; its exception text never reaches the client or the logs', async () => {
      const t = await startApp();
      const result = await t.post('/p/agents/writer/broken', { prompt: BODY_CANARY });
      expectDenied(result, 403, 'agent_invocation', 'invalid_content');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(EXTRACTOR_CANARY, result, t);
      expectNowhere(BODY_CANARY, result, t);
      expect(sink.decisions[0]).toMatchObject({ subject: 'writer', budget: { measured_bytes: null } });
    });

    it('denies invalid_arguments when a tool args extractor throws; its exception text never reaches the client or the logs', async () => {
      const t = await startApp();
      const result = await t.post('/p/tools/calc/broken', { args: BODY_CANARY });
      expectDenied(result, 403, 'tool_call', 'invalid_arguments');
      expect(t.probe.ran).toEqual([]);
      expectNowhere(EXTRACTOR_CANARY, result, t);
      expectNowhere(BODY_CANARY, result, t);
    });
  });

  it('keeps every recorded decision content-free and verifiable', async () => {
    const t = await startApp();
    await t.post('/p/agents/helper', { prompt: BODY_CANARY.slice(0, 20) });
    await t.post('/p/agents/stranger', { prompt: BODY_CANARY });
    await t.post('/p/tools/search', argsOfSize(ARG_LIMIT + 50, BODY_CANARY));
    t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
    await t.post('/p/tools/search', {});
    expect(sink.decisions).toHaveLength(6);
    for (const decision of sink.decisions) {
      expect(verifyDecisionDigest(decision)).toBe(true);
      expect(Object.isFrozen(decision)).toBe(true);
    }
    const stored = JSON.stringify(sink.decisions);
    expect(stored).not.toContain(BODY_CANARY.slice(0, 20));
    expect(stored).not.toContain(RESULT_CANARY);
  });
});

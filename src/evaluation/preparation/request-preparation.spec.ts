import { canonicalJson } from '../../json/canonical-json';
import { sha256Hex } from '../../shared/text/sha256';
import { countNodes, escapeHeavyRequest, nearLimitRequest, validSubmitRequest, type SubmitRequest } from '../testing/eval-requests';
import type { PreparedEvalRequest } from '../eval.types';
import { prepareEvalRequest, type PreparationOutcome } from './request-preparation';

const LIMITS = { taskTimeoutMs: 60_000 };

function prepared(request: unknown): PreparedEvalRequest {
  const outcome = prepareEvalRequest(request, LIMITS);
  if (!outcome.ok) throw new Error(`expected a prepared request, got ${outcome.code} ${JSON.stringify(outcome.details)}`);
  return outcome.prepared;
}

function refused(request: unknown, limits = LIMITS): Extract<PreparationOutcome, { ok: false }> {
  const outcome = prepareEvalRequest(request, limits);
  if (outcome.ok) throw new Error('expected a refusal');
  return outcome;
}

/** The valid request with its set's members replaced. */
const withSet = (set: Record<string, unknown>): SubmitRequest => validSubmitRequest({ set: { ...validSubmitRequest().set, ...set } });
/** The valid request with its cases replaced. */
const withCases = (...cases: unknown[]): SubmitRequest => withSet({ cases });
const goodCase = (caseId: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ case_id: caseId, input: 'hi', expected_output: 'hello', ...extra });
const bytes = (n: number, unit = 'a'): string => unit.repeat(n / Buffer.byteLength(unit));

describe('prepareEvalRequest (spec 05 §4.1)', () => {
  describe('a valid request', () => {
    it('is normalised with defaults, sizes and the set digest', () => {
      const result = prepared(validSubmitRequest());
      expect(result.set).toEqual(validSubmitRequest().set);
      expect(result.agent).toBe('assistant');
      expect(result.metrics).toEqual([
        { name: 'response_match', threshold: 0.5, match: 'rouge_1' },
        { name: 'tool_trajectory', threshold: 1 },
      ]);
      expect(result.options).toEqual({ case_timeout_ms: 5000 });
      expect(result.metadata).toEqual({ build: '1.2.3', owner: { team: 'evals' } });
      const setText = canonicalJson(result.set);
      expect(result.set_digest).toBe(sha256Hex(setText));
      expect(result.set_digest).toMatch(/^[0-9a-f]{64}$/);
      expect(result.set_bytes).toBe(Buffer.byteLength(setText));
      const whole = { set: result.set, agent: result.agent, metrics: result.metrics, options: result.options, metadata: result.metadata };
      expect(result.request_bytes).toBe(Buffer.byteLength(canonicalJson(whole)));
    });

    it('applies the metric defaults: response_match 0.8 rouge_1, the trajectories 1.0', () => {
      const set = { id: 's', version: '1', cases: [goodCase('a', { expected_tool_calls: [] })] };
      const result = prepared(validSubmitRequest({ set, metrics: [{ name: 'response_match' }, { name: 'tool_trajectory' }, { name: 'tool_trajectory_in_order' }] }));
      expect(result.metrics).toEqual([
        { name: 'response_match', threshold: 0.8, match: 'rouge_1' },
        { name: 'tool_trajectory', threshold: 1 },
        { name: 'tool_trajectory_in_order', threshold: 1 },
      ]);
    });

    it('defaults options and metadata to {}', () => {
      const result = prepared(validSubmitRequest({ options: undefined, metadata: undefined }));
      expect(result.options).toEqual({});
      expect(result.metadata).toEqual({});
    });

    it('holds JSON-normal objects (no null prototype), "__proto__" as an own member', () => {
      const result = prepared({ ...validSubmitRequest(), metadata: JSON.parse('{"__proto__":{"x":1}}') });
      expect(Object.getPrototypeOf(result.metadata)).toBe(Object.prototype);
      expect(Object.hasOwn(result.metadata, '__proto__')).toBe(true);
    });

    it('is plain data that survives a structured clone, as is a refusal', () => {
      const ok = prepareEvalRequest(validSubmitRequest(), LIMITS);
      expect(structuredClone(ok)).toEqual(ok);
      const refusal = prepareEvalRequest({ nope: 1 }, LIMITS);
      expect(structuredClone(refusal)).toEqual(refusal);
    });

    it('prepares a near-limit request (49,999 nodes, 10,000 cases)', () => {
      const request = nearLimitRequest();
      expect(countNodes(request)).toBe(49_999);
      const result = prepared(request);
      expect(result.set.cases).toHaveLength(10_000);
      expect(result.request_bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    });
  });

  describe('set digest', () => {
    it('does not depend on the order of keys', () => {
      const reordered = {
        metadata: { build: '1.2.3', owner: { team: 'evals' } },
        metrics: [{ threshold: 0.5, name: 'response_match' }, { name: 'tool_trajectory' }],
        agent: 'assistant',
        set: {
          cases: [
            { expected_output: 'hello', input: 'Say hello', case_id: 'greeting' },
            { expected_tool_calls: [{ args: { city: 'Paris' }, name: 'get_weather' }], input: { parts: [{ text: 'Weather in Paris?' }], role: 'user' }, case_id: 'lookup' },
          ],
          version: 'v1',
          id: 'smoke',
        },
        options: { case_timeout_ms: 5000 },
      };
      const a = prepared(validSubmitRequest());
      const b = prepared(reordered);
      expect(b.set_digest).toBe(a.set_digest);
      expect(b.set_bytes).toBe(a.set_bytes);
      expect(b.request_bytes).toBe(a.request_bytes);
    });

    it('changes with the content of the set, not with agent, metrics or metadata', () => {
      const base = prepared(validSubmitRequest()).set_digest;
      expect(prepared(withSet({ version: 'v2' })).set_digest).not.toBe(base);
      expect(prepared(validSubmitRequest({ agent: 'other', metadata: { x: 1 } })).set_digest).toBe(base);
    });
  });

  describe('request keys', () => {
    it('refuses unknown keys with unknown_eval_request_fields, sorted; odd names as "unknown"', () => {
      const outcome = refused({ ...validSubmitRequest(), zeta: 1, alpha: 2, 'bad key\n': 3 });
      expect(outcome).toEqual({ ok: false, code: 'unknown_eval_request_fields', details: { fields: ['alpha', 'unknown', 'zeta'] } });
    });

    it.each([['an array', []], ['a string', 'x'], ['null', null]])('refuses %s as the request (invalid_eval_request)', (_name, request) => {
      expect(refused(request)).toEqual({ ok: false, code: 'invalid_eval_request', details: { reason: 'not_object' } });
    });
  });

  describe('set → invalid_eval_set', () => {
    const cases: [string, () => unknown, Record<string, unknown>][] = [
      ['a missing set', () => validSubmitRequest({ set: undefined }), { reason: 'set' }],
      ['a set that is an array', () => validSubmitRequest({ set: [] }), { reason: 'set' }],
      ['an unknown set key', () => withSet({ extra: 1 }), { reason: 'fields', field: 'extra' }],
      ['an empty id', () => withSet({ id: '' }), { reason: 'id' }],
      ['a 258-byte id of 129 characters', () => withSet({ id: bytes(258, 'é') }), { reason: 'id' }],
      ['a numeric id', () => withSet({ id: 7 }), { reason: 'id' }],
      ['an empty version', () => withSet({ version: '' }), { reason: 'version' }],
      ['a 129-byte version', () => withSet({ version: bytes(129) }), { reason: 'version' }],
      ['no cases', () => withCases(), { reason: 'cases' }],
      ['cases that are not an array', () => withSet({ cases: { a: 1 } }), { reason: 'cases' }],
      ['10,001 cases', () => withCases(...Array.from({ length: 10_001 }, (_, i) => ({ case_id: `${i}`, input: '' }))), { reason: 'cases' }],
      ['a case that is not an object', () => withCases(goodCase('a'), 'b'), { reason: 'case', index: 1 }],
      ['an unknown case key', () => withCases(goodCase('a', { note: 1 })), { reason: 'fields', index: 0, field: 'note' }],
      ['a missing case_id', () => withCases({ input: 'hi' }), { reason: 'case_id', index: 0 }],
      ['a 257-byte case_id', () => withCases(goodCase(bytes(257))), { reason: 'case_id', index: 0 }],
      ['a duplicate case_id', () => withCases(goodCase('a'), goodCase('b'), goodCase('a')), { reason: 'duplicate_case_id', index: 2 }],
      ['a missing input', () => withCases({ case_id: 'a', expected_output: 'x' }), { reason: 'input', index: 0 }],
      ['a numeric input', () => withCases(goodCase('a', { input: 3 })), { reason: 'input', index: 0 }],
      ['model content as input', () => withCases(goodCase('a', { input: { role: 'model', parts: [{ text: 'x' }] } })), { reason: 'input', index: 0 }],
      ['a part with text and data', () => withCases(goodCase('a', { input: { role: 'user', parts: [{ text: 'x', data: 1 }] } })), { reason: 'input', index: 0 }],
      ['a part whose text is not a string', () => withCases(goodCase('a', { input: { role: 'user', parts: [{ text: 1 }] } })), { reason: 'input', index: 0 }],
      ['an expected_output that is not a string', () => withCases(goodCase('a', { expected_output: 1 })), { reason: 'expected_output', index: 0 }],
      ['expected_tool_calls that are not an array', () => withCases(goodCase('a', { expected_tool_calls: {} })), { reason: 'expected_tool_calls', index: 0 }],
      ['a tool call without args', () => withCases(goodCase('a', { expected_tool_calls: [{ name: 't' }] })), { reason: 'expected_tool_calls', index: 0 }],
      ['a tool call whose args are an array', () => withCases(goodCase('a', { expected_tool_calls: [{ name: 't', args: [] }] })), { reason: 'expected_tool_calls', index: 0 }],
      ['a tool call with an empty name', () => withCases(goodCase('a', { expected_tool_calls: [{ name: '', args: {} }] })), { reason: 'expected_tool_calls', index: 0 }],
      ['a tool call with an extra key', () => withCases(goodCase('a', { expected_tool_calls: [{ name: 't', args: {}, id: 1 }] })), { reason: 'expected_tool_calls', index: 0 }],
    ];
    it.each(cases)('refuses %s', (_name, build, details) => {
      expect(refused(build())).toEqual({ ok: false, code: 'invalid_eval_set', details });
    });

    it('accepts ids, versions and case ids at their byte bounds', () => {
      const result = prepared(withSet({ id: bytes(256, 'é'), version: bytes(128), cases: [goodCase(`a${bytes(255, '€')}`)].concat(validSubmitRequest().set.cases.slice(1)) }));
      expect(Buffer.byteLength(result.set.id)).toBe(256);
      expect(Buffer.byteLength(result.set.cases[0].case_id)).toBe(256);
    });

    it('accepts data parts, an empty text, and an empty list of expected tool calls', () => {
      const result = prepared(
        withCases(
          goodCase('a', { input: { role: 'user', parts: [{ data: { k: [1, null] } }, { text: '' }] } }),
          goodCase('b', { input: '', expected_tool_calls: [] }),
        ),
      );
      expect(result.set.cases[0].input).toEqual({ role: 'user', parts: [{ data: { k: [1, null] } }, { text: '' }] });
      expect(result.set.cases[1].expected_tool_calls).toEqual([]);
    });

    it('refuses U+0000 in an id or a version as invalid_eval_request', () => {
      expect(refused(withSet({ id: 'a\u0000' }))).toEqual({ ok: false, code: 'invalid_eval_request', details: { reason: 'nul_character' } });
      expect(refused(withSet({ version: '\u0000' })).code).toBe('invalid_eval_request');
      expect(refused(withCases(goodCase('\u0000'))).code).toBe('invalid_eval_request');
    });
  });

  describe('agent → invalid_eval_agent', () => {
    it.each([
      ['missing', undefined],
      ['empty', ''],
      ['a number', 5],
      ['with a control character', 'agent\n'],
      ['257 bytes long', bytes(257)],
    ])('refuses an agent %s', (_name, agent) => {
      expect(refused(validSubmitRequest({ agent })).code).toBe('invalid_eval_agent');
    });

    it('accepts any name of the Runner rule (checking that it exists is the service’s part)', () => {
      expect(prepared(validSubmitRequest({ agent: 'Ünïcode agent / v2' })).agent).toBe('Ünïcode agent / v2');
    });
  });

  describe('metrics → invalid_eval_metrics', () => {
    const onlyOutput = (metrics: unknown): SubmitRequest => validSubmitRequest({ set: { id: 's', version: '1', cases: [goodCase('a')] }, metrics });
    const cases: [string, () => unknown, Record<string, unknown>][] = [
      ['missing metrics', () => validSubmitRequest({ metrics: undefined }), { reason: 'metrics' }],
      ['metrics that are not an array', () => validSubmitRequest({ metrics: { name: 'response_match' } }), { reason: 'metrics' }],
      ['an empty list', () => validSubmitRequest({ metrics: [] }), { reason: 'metrics' }],
      ['10,001 metrics', () => validSubmitRequest({ metrics: Array.from({ length: 10_001 }, () => ({ name: 'response_match' })) }), { reason: 'metrics' }],
      ['a metric that is not an object', () => validSubmitRequest({ metrics: ['response_match'] }), { reason: 'metric', index: 0 }],
      ['an unknown metric key', () => validSubmitRequest({ metrics: [{ name: 'response_match', weight: 2 }] }), { reason: 'fields', index: 0, field: 'weight' }],
      ['an unknown name', () => validSubmitRequest({ metrics: [{ name: 'bleu' }] }), { reason: 'name', index: 0 }],
      ['a missing name', () => validSubmitRequest({ metrics: [{ threshold: 1 }] }), { reason: 'name', index: 0 }],
      ['a threshold below 0', () => validSubmitRequest({ metrics: [{ name: 'response_match', threshold: -0.01 }] }), { reason: 'threshold', index: 0 }],
      ['a threshold above 1', () => validSubmitRequest({ metrics: [{ name: 'tool_trajectory', threshold: 1.01 }] }), { reason: 'threshold', index: 0 }],
      ['a threshold as text', () => validSubmitRequest({ metrics: [{ name: 'response_match', threshold: '0.5' }] }), { reason: 'threshold', index: 0 }],
      ['match on a trajectory metric', () => validSubmitRequest({ metrics: [{ name: 'tool_trajectory', match: 'exact' }] }), { reason: 'match', index: 0 }],
      ['an unknown match', () => validSubmitRequest({ metrics: [{ name: 'response_match', match: 'fuzzy' }] }), { reason: 'match', index: 0 }],
      ['a repeated name', () => validSubmitRequest({ metrics: [{ name: 'tool_trajectory' }, { name: 'response_match' }, { name: 'tool_trajectory', threshold: 0.5 }] }), { reason: 'duplicate_name', index: 2 }],
      ['tool_trajectory without a case with expected_tool_calls', () => onlyOutput([{ name: 'tool_trajectory' }]), { reason: 'not_applicable', index: 0 }],
      ['tool_trajectory_in_order without a case with expected_tool_calls', () => onlyOutput([{ name: 'response_match' }, { name: 'tool_trajectory_in_order' }]), { reason: 'not_applicable', index: 1 }],
      ['response_match without a case with expected_output', () => validSubmitRequest({ set: { id: 's', version: '1', cases: [{ case_id: 'a', input: 'x', expected_tool_calls: [] }] }, metrics: [{ name: 'response_match' }] }), { reason: 'not_applicable', index: 0 }],
    ];
    it.each(cases)('refuses %s', (_name, build, details) => {
      expect(refused(build())).toEqual({ ok: false, code: 'invalid_eval_metrics', details });
    });

    it('accepts thresholds 0 and 1 and match "exact"', () => {
      const result = prepared(validSubmitRequest({ metrics: [{ name: 'response_match', threshold: 0, match: 'exact' }, { name: 'tool_trajectory', threshold: 1 }] }));
      expect(result.metrics[0]).toEqual({ name: 'response_match', threshold: 0, match: 'exact' });
    });
  });

  describe('options → invalid_eval_options', () => {
    it.each([
      ['not an object', 5, { reason: 'options' }],
      ['an array', [], { reason: 'options' }],
      ['an unknown key', { retries: 1 }, { reason: 'fields', field: 'retries' }],
      ['case_timeout_ms 0', { case_timeout_ms: 0 }, { reason: 'case_timeout_ms' }],
      ['a fractional case_timeout_ms', { case_timeout_ms: 1.5 }, { reason: 'case_timeout_ms' }],
      ['case_timeout_ms above taskTimeoutMs', { case_timeout_ms: 60_001 }, { reason: 'case_timeout_ms' }],
    ])('refuses options %s', (_name, options, details) => {
      expect(refused(validSubmitRequest({ options }))).toEqual({ ok: false, code: 'invalid_eval_options', details });
    });

    it('accepts case_timeout_ms from 1 up to the service’s taskTimeoutMs', () => {
      expect(prepared(validSubmitRequest({ options: { case_timeout_ms: 1 } })).options).toEqual({ case_timeout_ms: 1 });
      expect(prepared(validSubmitRequest({ options: { case_timeout_ms: 60_000 } })).options).toEqual({ case_timeout_ms: 60_000 });
      expect(refused(validSubmitRequest({ options: { case_timeout_ms: 5000 } }), { taskTimeoutMs: 4999 }).code).toBe('invalid_eval_options');
    });
  });

  describe('metadata', () => {
    it('redacts values under secret keys at any depth, case-insensitively, by substring', () => {
      const metadata = {
        build: 'keep',
        Secret: 's',
        access_token: 't',
        userPassword: 'p',
        my_api_key: 'k',
        Authorization: 'Bearer abc',
        credentials: { user: 'u', pass: 'p' },
        nested: { deeper: [{ REFRESH_TOKEN: 'r', note: 'keep' }, 'plain'] },
      };
      expect(prepared(validSubmitRequest({ metadata })).metadata).toEqual({
        build: 'keep',
        Secret: '[redacted]',
        access_token: '[redacted]',
        userPassword: '[redacted]',
        my_api_key: '[redacted]',
        Authorization: '[redacted]',
        credentials: '[redacted]',
        nested: { deeper: [{ REFRESH_TOKEN: '[redacted]', note: 'keep' }, 'plain'] },
      });
    });

    it('does not touch the caller’s object while redacting', () => {
      const request = validSubmitRequest({ metadata: { token: 't' } });
      prepared(request);
      expect(request.metadata).toEqual({ token: 't' });
    });

    it('refuses metadata that is not an object (invalid_eval_request)', () => {
      expect(refused(validSubmitRequest({ metadata: ['a'] }))).toEqual({ ok: false, code: 'invalid_eval_request', details: { reason: 'metadata' } });
      expect(refused(validSubmitRequest({ metadata: 'a' })).code).toBe('invalid_eval_request');
    });
  });

  describe('whole request', () => {
    it('refuses a request whose canonical JSON passes 2 MiB though its strings do not', () => {
      expect(refused(escapeHeavyRequest())).toEqual({ ok: false, code: 'evaluation_request_limit_exceeded', details: { limit: 'bytes' } });
    });

    it('applies the pre-walk bounds itself: depth, nodes, bytes', () => {
      let deep: unknown = {};
      for (let i = 0; i < 70; i++) deep = { d: deep };
      expect(refused(validSubmitRequest({ metadata: deep })).details).toEqual({ limit: 'depth' });
      expect(refused(nearLimitRequest(50_001)).details).toEqual({ limit: 'nodes' });
      expect(refused(validSubmitRequest({ metadata: { a: 'x'.repeat(2 * 1024 * 1024) } })).details).toEqual({ limit: 'bytes' });
    });

    it('refuses U+0000 anywhere, a key included', () => {
      expect(refused(validSubmitRequest({ metadata: { note: 'a\u0000' } })).code).toBe('invalid_eval_request');
      expect(refused(validSubmitRequest({ metadata: { 'k\u0000': 1 } })).code).toBe('invalid_eval_request');
    });

    it('never calls a getter and refuses a Proxy without running a trap', () => {
      const getter = jest.fn(() => 'x');
      const request = validSubmitRequest();
      Object.defineProperty(request.set.cases[0], 'expected_output', { get: getter, enumerable: true });
      expect(refused(request)).toEqual({ ok: false, code: 'invalid_eval_request', details: { reason: 'accessor' } });
      expect(getter).not.toHaveBeenCalled();
      const trap = jest.fn();
      const proxy = new Proxy(validSubmitRequest(), { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap });
      expect(refused(proxy).details).toEqual({ reason: 'non_plain_object' });
      expect(trap).not.toHaveBeenCalled();
    });

    it('carries no content in its details', () => {
      const outcome = refused({ ...validSubmitRequest(), 'sk-live-secret': 1 });
      expect(JSON.stringify(outcome)).not.toContain('sk-live-secret');
    });
  });
});

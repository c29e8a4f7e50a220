import type { EvalCase, EvalCaseResult, EvalMetric } from '../eval.types';
import type { CaseRun } from './case-run';
import { buildCaseResult, buildEvalResult, MAX_ACTUAL_OUTPUT_BYTES, MAX_ACTUAL_TOOL_CALLS } from './eval-result';

const RESPONSE: EvalMetric = { name: 'response_match', threshold: 0.8, match: 'rouge_1' };
const TRAJECTORY: EvalMetric = { name: 'tool_trajectory', threshold: 1 };
const IN_ORDER: EvalMetric = { name: 'tool_trajectory_in_order', threshold: 0.5 };
const ALL = [RESPONSE, TRAJECTORY, IN_ORDER];

const lookup = { name: 'lookup', args: { id: 7 } };
const notify = { name: 'notify', args: {} };

const completed = (output: string, toolCalls: CaseRun['toolCalls'] = []): CaseRun => ({ error: null, output, toolCalls });
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('buildCaseResult (spec 05 §7)', () => {
  it('scores each applicable metric and leaves the others null', () => {
    const textOnly: EvalCase = { case_id: 'c1', input: 'hi', expected_output: 'hello there' };
    expect(buildCaseResult(textOnly, ALL, completed('Hello there!')).scores).toEqual({ response_match: 1, tool_trajectory: null, tool_trajectory_in_order: null });
    const toolsOnly: EvalCase = { case_id: 'c2', input: 'hi', expected_tool_calls: [lookup, notify] };
    expect(buildCaseResult(toolsOnly, ALL, completed('x', [lookup])).scores).toEqual({ response_match: null, tool_trajectory: 0, tool_trajectory_in_order: 0.5 });
  });

  it('uses the metric match mode: exact gives 0 where rouge_1 gives partial credit', () => {
    const evalCase: EvalCase = { case_id: 'c', input: 'hi', expected_output: 'the cat sat down' };
    expect(buildCaseResult(evalCase, [RESPONSE], completed('the cat sat')).scores.response_match).toBeCloseTo(6 / 7, 12);
    expect(buildCaseResult(evalCase, [{ ...RESPONSE, match: 'exact' }], completed('the cat sat')).scores.response_match).toBe(0);
  });

  it('passes when every applicable score reaches its threshold (a score equal to it included)', () => {
    const evalCase: EvalCase = { case_id: 'c', input: 'hi', expected_output: 'a b', expected_tool_calls: [lookup, notify] };
    const result = buildCaseResult(evalCase, ALL, completed('a b', [lookup]));
    expect(result.scores.tool_trajectory_in_order).toBe(0.5);
    expect(buildCaseResult(evalCase, [RESPONSE, IN_ORDER], completed('a b', [lookup])).passed).toBe(true);
    expect(result.passed).toBe(false);
  });

  it('fails when one applicable score is below its threshold, ignoring metrics that do not apply', () => {
    const evalCase: EvalCase = { case_id: 'c', input: 'hi', expected_output: 'one two three four five' };
    expect(buildCaseResult(evalCase, ALL, completed('one two three four five')).passed).toBe(true);
    // F = 2·3 / (3 + 5) = 0.75 < 0.8
    expect(buildCaseResult(evalCase, ALL, completed('one two three')).passed).toBe(false);
  });

  it('scores 0 for every applicable metric of a case that ended with an error, which never passes', () => {
    const evalCase: EvalCase = { case_id: 'c', input: 'hi', expected_output: 'x', expected_tool_calls: [] };
    const result = buildCaseResult(evalCase, ALL, { error: 'run_paused', output: '', toolCalls: [] });
    expect(result).toMatchObject({ error: 'run_paused', passed: false, scores: { response_match: 0, tool_trajectory: 0, tool_trajectory_in_order: 0 } });
    const zeroThreshold = buildCaseResult(evalCase, [{ ...RESPONSE, threshold: 0 }], { error: 'case_timeout', output: '', toolCalls: [] });
    expect(zeroThreshold.passed).toBe(false);
    expect(buildCaseResult({ case_id: 'none', input: 'hi' }, ALL, { error: 'model_failed', output: '', toolCalls: [] }).scores).toEqual({
      response_match: null,
      tool_trajectory: null,
      tool_trajectory_in_order: null,
    });
  });

  it('records the output and the calls (name and args) of the run', () => {
    const result = buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed('done', [lookup, notify]));
    expect(result).toEqual({ case_id: 'c', passed: true, error: null, scores: {}, actual_output: 'done', actual_tool_calls: [lookup, notify], truncated: false });
  });

  describe('truncation', () => {
    it('keeps an output of exactly 16 KiB whole', () => {
      const output = 'a'.repeat(MAX_ACTUAL_OUTPUT_BYTES);
      const result = buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed(output));
      expect(result.actual_output).toBe(output);
      expect(result.truncated).toBe(false);
    });

    it('cuts a longer output to 16 KiB of UTF-8', () => {
      const result = buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed('a'.repeat(MAX_ACTUAL_OUTPUT_BYTES + 1)));
      expect(result.actual_output).toBe('a'.repeat(MAX_ACTUAL_OUTPUT_BYTES));
      expect(result.truncated).toBe(true);
    });

    it('cuts on a character boundary: never half of a 2-, 3- or 4-byte character', () => {
      const cut = (unit: string, count: number) => buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed(unit.repeat(count))).actual_output;
      expect(cut('é', 8193)).toBe('é'.repeat(8192)); // 16386 bytes → 16384
      expect(cut('€', 5462)).toBe('€'.repeat(5461)); // 16386 bytes → 16383, the 5462nd would straddle the cut
      expect(cut('😀', 4097)).toBe('😀'.repeat(4096)); // 16388 bytes → 16384
      expect(bytes(cut('x€', 5000))).toBeLessThanOrEqual(MAX_ACTUAL_OUTPUT_BYTES);
      expect(cut('x€', 5000).isWellFormed()).toBe(true);
    });

    it('scores the whole output, not the cut one', () => {
      const long = 'word '.repeat(5000).trim();
      const result = buildCaseResult({ case_id: 'c', input: 'hi', expected_output: long }, [{ ...RESPONSE, match: 'exact' }], completed(long));
      expect(result.truncated).toBe(true);
      expect(result.scores.response_match).toBe(1);
    });

    it('keeps 100 tool calls and cuts the 101st, scoring the whole trajectory', () => {
      const calls = Array.from({ length: MAX_ACTUAL_TOOL_CALLS + 1 }, (_, i) => ({ name: 'step', args: { i } }));
      const evalCase: EvalCase = { case_id: 'c', input: 'hi', expected_tool_calls: calls };
      const full = buildCaseResult(evalCase, [TRAJECTORY], completed('', calls.slice(0, MAX_ACTUAL_TOOL_CALLS)));
      expect(full.truncated).toBe(false);
      expect(full.actual_tool_calls).toHaveLength(100);
      const over = buildCaseResult(evalCase, [TRAJECTORY], completed('', calls));
      expect(over.truncated).toBe(true);
      expect(over.actual_tool_calls).toEqual(calls.slice(0, 100));
      expect(over.scores.tool_trajectory).toBe(1);
    });
  });

  describe('U+0000', () => {
    it('becomes U+FFFD in the output', () => {
      expect(buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed('a\u0000b\u0000')).actual_output).toBe('a\uFFFDb\uFFFD');
    });

    it('becomes U+FFFD in tool names, argument strings and argument keys, and a backslash text stays as it is', () => {
      const call = { name: 'do\u0000it', args: { 'k\u0000': ['v\u0000', { deep: 'x\u0000y' }], literal: '\\u0000', both: '\\\u0000' } };
      const [recorded] = buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed('', [call])).actual_tool_calls;
      expect(recorded).toEqual({ name: 'do\uFFFDit', args: { 'k\uFFFD': ['v\uFFFD', { deep: 'x\uFFFDy' }], literal: '\\u0000', both: '\\\uFFFD' } });
    });

    it('also replaces a lone surrogate of the output, so the record is well-formed', () => {
      expect(buildCaseResult({ case_id: 'c', input: 'hi' }, [], completed('a\uD800b')).actual_output).toBe('a\uFFFDb');
    });
  });

  it('is deep-frozen and shares nothing with the run', () => {
    const args = { list: [1] };
    const result = buildCaseResult({ case_id: 'c', input: 'hi', expected_output: 'x' }, ALL, completed('x', [{ name: 'n', args }]));
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.scores)).toBe(true);
    expect(Object.isFrozen(result.actual_tool_calls[0].args)).toBe(true);
    expect(result.actual_tool_calls[0].args).not.toBe(args);
    expect(Object.isFrozen(args)).toBe(false);
  });
});

describe('buildEvalResult (spec 05 §7)', () => {
  const caseWith = (case_id: string, scores: Record<string, number | null>, error: string | null = null): EvalCaseResult => ({
    case_id,
    passed: error === null,
    error,
    scores,
    actual_output: '',
    actual_tool_calls: [],
    truncated: false,
  });

  it('averages each metric over the cases it applies to and compares the mean with the threshold', () => {
    const cases = [
      caseWith('a', { response_match: 1, tool_trajectory: 1, tool_trajectory_in_order: 1 }),
      caseWith('b', { response_match: 0.6, tool_trajectory: null, tool_trajectory_in_order: null }),
      caseWith('c', { response_match: null, tool_trajectory: 0, tool_trajectory_in_order: 0.5 }),
    ];
    const result = buildEvalResult(ALL, cases);
    expect(result.schema_version).toBe(1);
    expect(result.metrics.response_match).toEqual({ score: 0.8, threshold: 0.8, passed: true });
    expect(result.metrics.tool_trajectory).toEqual({ score: 0.5, threshold: 1, passed: false });
    expect(result.metrics.tool_trajectory_in_order).toEqual({ score: 0.75, threshold: 0.5, passed: true });
    expect(result.passed).toBe(false);
    expect(result.cases.map((item) => item.case_id)).toEqual(['a', 'b', 'c']);
  });

  it('passes when every metric passes, whatever individual cases did', () => {
    const cases = [caseWith('a', { response_match: 1 }), caseWith('b', { response_match: 0.7 })];
    const result = buildEvalResult([RESPONSE], cases);
    expect(result.metrics.response_match.score).toBeCloseTo(0.85, 12);
    expect(result.passed).toBe(true);
  });

  it('counts the zero scores of failed cases in the mean', () => {
    const result = buildEvalResult([TRAJECTORY], [caseWith('a', { tool_trajectory: 1 }), caseWith('b', { tool_trajectory: 0 }, 'case_timeout')]);
    expect(result.metrics.tool_trajectory.score).toBe(0.5);
  });

  it('scores 0 for a metric no case applies to', () => {
    expect(buildEvalResult([TRAJECTORY], [caseWith('a', { tool_trajectory: null })]).metrics.tool_trajectory).toEqual({ score: 0, threshold: 1, passed: false });
  });

  it('is deep-frozen', () => {
    const result = buildEvalResult([RESPONSE], [caseWith('a', { response_match: 1 })]);
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.metrics.response_match)).toBe(true);
    expect(Object.isFrozen(result.cases)).toBe(true);
  });
});

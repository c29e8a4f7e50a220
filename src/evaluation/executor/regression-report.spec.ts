import type { EvalCaseResult, EvalMetricResult, EvalResult } from '../eval.types';
import { compareResults } from './regression-report';

type Scores = Record<string, number | null>;

function caseResult(case_id: string, scores: Scores, error: string | null = null): EvalCaseResult {
  return { case_id, passed: error === null, error, scores, actual_output: `output of ${case_id}: secret-text`, actual_tool_calls: [{ name: 'tool', args: { secret: 'arg-value' } }], truncated: false };
}

function result(metrics: Record<string, Partial<EvalMetricResult> & { score: number }>, cases: EvalCaseResult[]): EvalResult {
  const full = Object.fromEntries(Object.entries(metrics).map(([name, m]) => [name, { threshold: 0.8, ...m, passed: m.score >= (m.threshold ?? 0.8) }]));
  return { schema_version: 1, passed: Object.values(full).every((m) => m.passed), metrics: full, cases };
}

const base = (metrics: Parameters<typeof result>[0], cases: EvalCaseResult[]) => ({ job_id: 'eval-base', result: result(metrics, cases) });
const cand = (metrics: Parameters<typeof result>[0], cases: EvalCaseResult[]) => ({ job_id: 'eval-cand', result: result(metrics, cases) });

describe('compareResults', () => {
  const baselineCases = [caseResult('a', { response_match: 1 }), caseResult('b', { response_match: 0.9 }), caseResult('c', { response_match: 0.5 })];
  const baseline = base({ response_match: { score: 0.8 } }, baselineCases);

  it('reports identical results as not regressed, with delta 0 and no case', () => {
    const report = compareResults(baseline, { job_id: 'eval-cand', result: baseline.result });
    expect(report).toEqual({
      schema_version: 1,
      regressed: false,
      tolerance: 0,
      baseline_job_id: 'eval-base',
      candidate_job_id: 'eval-cand',
      metrics: { response_match: { baseline_score: 0.8, candidate_score: 0.8, delta: 0, threshold: 0.8, passed: true, regressed: false } },
      cases: [],
    });
  });

  it('regresses a metric whose candidate score falls below its threshold', () => {
    const report = compareResults(baseline, cand({ response_match: { score: 0.7 } }, baselineCases));
    expect(report.metrics.response_match).toMatchObject({ candidate_score: 0.7, passed: false, regressed: true });
    expect(report.regressed).toBe(true);
  });

  it('regresses a metric whose score falls below the baseline even while above its threshold, unless within the tolerance', () => {
    const higher = base({ response_match: { score: 0.95 } }, baselineCases);
    const lower = cand({ response_match: { score: 0.85 } }, baselineCases);
    expect(compareResults(higher, lower).metrics.response_match).toMatchObject({ passed: true, regressed: true });
    expect(compareResults(higher, lower).metrics.response_match.delta).toBeCloseTo(-0.1, 12);
    expect(compareResults(higher, lower, { tolerance: 0.1 }).metrics.response_match.regressed).toBe(false);
    expect(compareResults(higher, lower, { tolerance: 0.05 }).metrics.response_match.regressed).toBe(true);
    expect(compareResults(higher, lower, { tolerance: 0.1 }).tolerance).toBe(0.1);
  });

  it('treats a drop of exactly the tolerance as within it despite floating-point rounding', () => {
    // 0.8 − 0.7 is 0.10000000000000009 in binary floating point
    const report = compareResults(base({ m: { score: 0.8, threshold: 0.5 } }, []), cand({ m: { score: 0.7, threshold: 0.5 } }, []), { tolerance: 0.1 });
    expect(report.metrics.m.regressed).toBe(false);
  });

  it('never lets the tolerance excuse a score below the threshold', () => {
    const report = compareResults(base({ m: { score: 0.82 } }, []), cand({ m: { score: 0.79 } }, []), { tolerance: 1 });
    expect(report.metrics.m.regressed).toBe(true);
  });

  it('an improvement is not a regression', () => {
    expect(compareResults(baseline, cand({ response_match: { score: 0.9 } }, baselineCases)).regressed).toBe(false);
  });

  it('lists the cases that reached a threshold in the baseline and miss it in the candidate, in baseline order', () => {
    const candidateCases = [caseResult('c', { response_match: 1 }), caseResult('b', { response_match: 0.5 }), caseResult('a', { response_match: 0.79 })];
    const report = compareResults(baseline, cand({ response_match: { score: 0.8 } }, candidateCases));
    expect(report.cases).toEqual([
      { case_id: 'a', regressed_metrics: ['response_match'] },
      { case_id: 'b', regressed_metrics: ['response_match'] },
    ]);
    // the metric itself held: cases are listed, the report is not regressed
    expect(report.regressed).toBe(false);
  });

  it('counts a candidate error and a missing candidate case as missing the threshold', () => {
    const candidateCases = [caseResult('a', { response_match: 0 }, 'case_timeout'), caseResult('c', { response_match: 0.5 })];
    expect(compareResults(baseline, cand({ response_match: { score: 0.8 } }, candidateCases)).cases).toEqual([
      { case_id: 'a', regressed_metrics: ['response_match'] },
      { case_id: 'b', regressed_metrics: ['response_match'] },
    ]);
  });

  it('does not list a case that failed in the baseline, with an error or below the threshold', () => {
    const failedBaseline = base({ response_match: { score: 0, threshold: 0 } }, [caseResult('a', { response_match: 0 }, 'run_paused')]);
    expect(compareResults(failedBaseline, cand({ response_match: { score: 0, threshold: 0 } }, [caseResult('a', { response_match: 0 }, 'run_paused')])).cases).toEqual([]);
  });

  it('names only the metrics a case lost, in the baseline metric order, and ignores metrics that do not apply', () => {
    const metrics = { tool_trajectory: { score: 1, threshold: 1 }, response_match: { score: 1 } };
    const before = base(metrics, [caseResult('x', { tool_trajectory: 1, response_match: 1 }), caseResult('y', { tool_trajectory: null, response_match: 1 })]);
    const after = cand({ tool_trajectory: { score: 0, threshold: 1 }, response_match: { score: 0.9 } }, [
      caseResult('x', { tool_trajectory: 0, response_match: 0.5 }),
      caseResult('y', { tool_trajectory: null, response_match: 1 }),
    ]);
    expect(compareResults(before, after).cases).toEqual([{ case_id: 'x', regressed_metrics: ['tool_trajectory', 'response_match'] }]);
  });

  describe('a metric on one side only', () => {
    it('missing from the candidate: candidate score null and regressed, and its cases listed', () => {
      const report = compareResults(baseline, cand({}, baselineCases));
      expect(report.metrics.response_match).toEqual({ baseline_score: 0.8, candidate_score: null, delta: null, threshold: 0.8, passed: false, regressed: true });
      expect(report.regressed).toBe(true);
      expect(report.cases.map((item) => item.case_id)).toEqual(['a', 'b']);
    });

    it('new in the candidate: baseline score null, regressed only when below its threshold', () => {
      const passingNew = compareResults(baseline, cand({ response_match: { score: 0.8 }, tool_trajectory: { score: 1, threshold: 1 } }, baselineCases));
      expect(passingNew.metrics.tool_trajectory).toEqual({ baseline_score: null, candidate_score: 1, delta: null, threshold: 1, passed: true, regressed: false });
      expect(passingNew.regressed).toBe(false);
      const failingNew = compareResults(baseline, cand({ response_match: { score: 0.8 }, tool_trajectory: { score: 0.5, threshold: 1 } }, baselineCases));
      expect(failingNew.metrics.tool_trajectory.regressed).toBe(true);
    });
  });

  it('is frozen and content-free: no output, tool argument or error text of either side', () => {
    const candidateCases = [caseResult('a', { response_match: 0 }, 'model_failed')];
    const report = compareResults(baseline, cand({ response_match: { score: 0.3 } }, candidateCases));
    expect(Object.isFrozen(report)).toBe(true);
    expect(Object.isFrozen(report.metrics.response_match)).toBe(true);
    expect(Object.isFrozen(report.cases[0].regressed_metrics)).toBe(true);
    const text = JSON.stringify(report);
    expect(text).not.toMatch(/secret|arg-value|model_failed|output of/);
  });

  it('keeps a case id or metric name such as __proto__ as an ordinary key', () => {
    const odd = base({ ['__proto__']: { score: 1 } } as never, []);
    const report = compareResults(odd, { job_id: 'eval-cand', result: odd.result });
    expect(Object.keys(report.metrics)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(report.metrics)).toBe(Object.prototype);
  });

  describe('bad arguments', () => {
    it.each([[-0.1], [1.5], [Number.NaN], ['0.1']])('refuses the tolerance %p', (tolerance) => {
      expect(() => compareResults(baseline, baseline, { tolerance } as never)).toThrow(expect.objectContaining({ code: 'invalid_eval_compare_options', details: { field: 'tolerance' } }));
    });

    it('refuses unknown options', () => {
      expect(() => compareResults(baseline, baseline, { tolerence: 0.1 } as never)).toThrow(expect.objectContaining({ code: 'invalid_eval_compare_options', details: { field: 'tolerence' } }));
    });

    it.each([
      ['baseline', null, baseline],
      ['baseline', { job_id: 'eval-x' }, baseline],
      ['candidate', baseline, { job_id: 'eval-x', result: { metrics: { m: { score: 'high', threshold: 1 } }, cases: [] } }],
      ['candidate', baseline, { job_id: 'eval-x', result: { metrics: {}, cases: [{ case_id: 1, scores: {}, error: null }] } }],
    ])('refuses a malformed %s', (field, left, right) => {
      expect(() => compareResults(left as never, right as never)).toThrow(expect.objectContaining({ code: 'invalid_eval_compare_options', details: { field } }));
    });
  });
});

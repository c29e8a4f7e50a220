import { canonicalJson, deepFreeze, frozenJsonParse, hasEscapedNul } from '../../json';
import type { JsonValue } from '../../json';
import type { EvalCase, EvalCaseResult, EvalMetric, EvalMetricResult, EvalResult, ExpectedToolCall } from '../eval.types';
import type { CaseRun } from './case-run';
import { responseMatchScore } from './response-match';
import { inOrderTrajectoryScore, trajectoryMatches } from './tool-trajectory';

/** `actual_output` is cut to this many UTF-8 bytes (spec 05 §7). */
export const MAX_ACTUAL_OUTPUT_BYTES = 16 * 1024;

/** `actual_tool_calls` keeps at most this many calls (spec 05 §7). */
export const MAX_ACTUAL_TOOL_CALLS = 100;

/**
 * The verdict of one case (spec 05 §7). Per metric the case's score, `null` where the metric does not
 * apply (`response_match` needs `expected_output`, the trajectory metrics `expected_tool_calls`), 0
 * for every applicable metric when the case ended with an error. Scores use the whole output and
 * trajectory; the record keeps at most {@link MAX_ACTUAL_OUTPUT_BYTES} of output (cut on a character
 * boundary) and {@link MAX_ACTUAL_TOOL_CALLS} calls, with `truncated: true` when either was cut.
 * U+0000 (and any lone surrogate) in the output and the calls becomes U+FFFD, since Postgres cannot
 * store it. The case passes when it has no error and every applicable score reaches its threshold.
 */
export function buildCaseResult(evalCase: EvalCase, metrics: readonly EvalMetric[], run: CaseRun): EvalCaseResult {
  const scored = metrics.map((metric) => [metric, caseScore(metric, evalCase, run)] as const);
  const passed = run.error === null && scored.every(([metric, score]) => score === null || score >= metric.threshold);
  const output = cutUtf8(withoutNul(run.output), MAX_ACTUAL_OUTPUT_BYTES);
  const calls = run.toolCalls.slice(0, MAX_ACTUAL_TOOL_CALLS).map(recordedCall);
  return deepFreeze({
    case_id: evalCase.case_id,
    passed,
    error: run.error,
    scores: Object.fromEntries(scored.map(([metric, score]) => [metric.name, score])),
    actual_output: output.text,
    actual_tool_calls: calls,
    truncated: output.cut || run.toolCalls.length > MAX_ACTUAL_TOOL_CALLS,
  });
}

/**
 * The result record of a job (spec 05 §7, `schema_version: 1`), deep-frozen. A metric's score is the
 * mean of its non-null case scores (for `tool_trajectory`, whose case scores are 0 or 1, the share of
 * matching cases), 0 when no case applies; it passes when score ≥ threshold. The result passes when
 * every metric passes.
 */
export function buildEvalResult(metrics: readonly EvalMetric[], cases: readonly EvalCaseResult[]): EvalResult {
  const verdicts = metrics.map((metric): [string, EvalMetricResult] => {
    const score = meanScore(cases, metric.name);
    return [metric.name, { score, threshold: metric.threshold, passed: score >= metric.threshold }];
  });
  return deepFreeze({
    schema_version: 1,
    passed: verdicts.every(([, verdict]) => verdict.passed),
    metrics: Object.fromEntries(verdicts),
    cases: [...cases],
  });
}

function caseScore(metric: EvalMetric, evalCase: EvalCase, run: CaseRun): number | null {
  if (metric.name === 'response_match') {
    if (typeof evalCase.expected_output !== 'string') return null;
    return run.error === null ? responseMatchScore(run.output, evalCase.expected_output, metric.match ?? 'rouge_1') : 0;
  }
  const expected = evalCase.expected_tool_calls;
  if (expected === undefined) return null;
  if (run.error !== null) return 0;
  if (metric.name === 'tool_trajectory') return trajectoryMatches(expected, run.toolCalls) ? 1 : 0;
  return inOrderTrajectoryScore(expected, run.toolCalls);
}

function meanScore(cases: readonly EvalCaseResult[], name: string): number {
  let sum = 0;
  let count = 0;
  for (const result of cases) {
    const score = Object.hasOwn(result.scores, name) ? result.scores[name] : null;
    if (typeof score !== 'number') continue;
    sum += score;
    count += 1;
  }
  return count === 0 ? 0 : sum / count;
}

function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. */
function cutUtf8(text: string, maxBytes: number): { readonly text: string; readonly cut: boolean } {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, cut: false };
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // a continuation byte (10xxxxxx) at the cut means the character straddles it: leave it out whole
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}

/** `\u0000` as canonical JSON escapes it, not preceded by an escaping backslash. */
const ESCAPED_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** A fresh copy of a call's name and arguments, U+0000 in any string or key replaced by U+FFFD. */
function recordedCall(call: { readonly name: string; readonly args: JsonValue }): ExpectedToolCall {
  const json = canonicalJson({ name: withoutNul(call.name), args: call.args });
  const clean = hasEscapedNul(json) ? json.replace(ESCAPED_NUL, '$1\\ufffd') : json;
  return frozenJsonParse(clean) as ExpectedToolCall;
}

import { canonicalJson } from '../../json/canonical-json';
import type { JsonObject, JsonValue } from '../../json/json.types';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import { isValidId } from '../../shared/ids/id-rule';
import { optionFailureDetails, readOwnData } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { isPlainObject } from '../../shared/options/plain-object';
import { sha256Hex } from '../../shared/text/sha256';
import { userContent } from '../../runner/loop/message';
import { REDACTED } from '../../trace/append/trace-redaction';
import { EvalServiceError, type EvalServiceErrorCode } from '../eval.errors';
import type { EvalCase, EvalMetric, EvalMetricName, EvalSet, ExpectedToolCall, PreparedEvalRequest } from '../eval.types';
import { EVAL_REQUEST_LIMITS, prewalkRequest } from './request-prewalk';

/** What the preparation needs from the service: its `taskTimeoutMs` bounds `case_timeout_ms`. */
export interface PreparationLimits {
  readonly taskTimeoutMs: number;
}

/** The codes a preparation can end with; `evaluation_request_validation_failed` stands for an unforeseen fault. */
export type PreparationErrorCode = Extract<
  EvalServiceErrorCode,
  | 'invalid_eval_request'
  | 'unknown_eval_request_fields'
  | 'invalid_eval_set'
  | 'invalid_eval_agent'
  | 'invalid_eval_metrics'
  | 'invalid_eval_options'
  | 'evaluation_request_limit_exceeded'
  | 'evaluation_request_validation_failed'
>;

/** Every {@link PreparationErrorCode}, for the pool to check what a worker answers. */
export const PREPARATION_ERROR_CODES: readonly PreparationErrorCode[] = Object.freeze([
  'invalid_eval_request',
  'unknown_eval_request_fields',
  'invalid_eval_set',
  'invalid_eval_agent',
  'invalid_eval_metrics',
  'invalid_eval_options',
  'evaluation_request_limit_exceeded',
  'evaluation_request_validation_failed',
]);

/** A preparation's answer: plain data, because it crosses the thread boundary by structured clone. */
export type PreparationOutcome =
  | { readonly ok: true; readonly prepared: PreparedEvalRequest }
  | { readonly ok: false; readonly code: PreparationErrorCode; readonly details: ErrorDetails };

/** What the pool posts to a worker. */
export interface PreparationTask {
  readonly request: unknown;
  readonly limits: PreparationLimits;
}

/**
 * What a worker posts back: a refusal as it is, a prepared request as its JSON text, which the event
 * loop parses into objects of its own realm (a structured clone's objects belong to the main context's
 * realm, which is not the caller's under a vm sandbox such as Jest, where prototype checks would fail).
 */
export type PreparationReply = { readonly ok: true; readonly json: string } | Extract<PreparationOutcome, { ok: false }>;

/** The task the pool runs once at start to prove a thread can start and load the worker; answered with itself. */
export const PREPARATION_PROBE = 'agent_runtime.eval_preparation_probe';

/** Bounds of the set (spec 05 §4.1), in UTF-8 bytes and counts. */
export const EVAL_SET_LIMITS = Object.freeze({ maxIdBytes: 256, maxVersionBytes: 128, maxCaseIdBytes: 256, maxCases: 10_000 });
/** Most metrics a request may list. */
export const MAX_EVAL_METRICS = 10_000;
/** Defaults of the metrics (spec 05 §7). */
export const METRIC_DEFAULTS = Object.freeze({ response_match: 0.8, tool_trajectory: 1, tool_trajectory_in_order: 1, match: 'rouge_1' as const });

/** A metadata key whose value is a secret: a case-insensitive substring match. */
const SECRET_KEY = /secret|token|password|api_key|authorization|credential/i;
const REQUEST_KEYS = ['set', 'agent', 'metrics', 'options', 'metadata'] as const;
const SET_KEYS = ['id', 'version', 'cases'] as const;
const CASE_KEYS = ['case_id', 'input', 'expected_output', 'expected_tool_calls'] as const;
const METRIC_KEYS = ['name', 'threshold', 'match'] as const;
const METRIC_NAMES: readonly EvalMetricName[] = ['response_match', 'tool_trajectory', 'tool_trajectory_in_order'];
/** `,"set":` — what the whole request's canonical JSON adds to that of the request without its set. */
const SET_MEMBER_BYTES = 7;

/**
 * The full preparation of a submitted request (spec 05 §4.1), run inside a preparation worker (and
 * directly in tests): the whole-request bounds again (the worker trusts nothing it is posted), every
 * field rule, the metric defaults, secret redaction of `metadata`, JSON normalisation, the set's
 * digest (SHA-256 hex of its canonical JSON) and sizes; `request_bytes` counts the canonical JSON
 * of the whole normalised request `{set, agent, metrics, options, metadata}` (≤ 2 MiB, else
 * `evaluation_request_limit_exceeded` `bytes`). Pure and synchronous. Never throws: a refusal is
 * `{ok: false, code, details}` data, so nothing but plain data crosses the thread boundary. The
 * prepared request is not frozen here (freezing does not survive the trip back to the event loop);
 * the pool freezes what it receives.
 *
 * `details.reason` names the rule that failed (`invalid_eval_set`: `set`, `fields`, `id`, `version`,
 * `cases`, `case`, `case_id`, `duplicate_case_id`, `input`, `expected_output`, `expected_tool_calls`;
 * `invalid_eval_metrics`: `metrics`, `metric`, `fields`, `name`, `threshold`, `match`,
 * `duplicate_name`, `not_applicable`; `invalid_eval_options`: `options`, `fields`,
 * `case_timeout_ms`; `invalid_eval_request`: `not_object` for the request, `metadata` for metadata
 * that is not an object, or a pre-walk reason), with the item's `index` where there is one and, for
 * `fields`, the unknown keys (`{field}` or `{fields}`, sorted, as `unknown_eval_request_fields` names them).
 * `agent` is checked against the Runner's root agent name rule only; whether the agent exists is the
 * service's question.
 */
export function prepareEvalRequest(request: unknown, limits: PreparationLimits): PreparationOutcome {
  try {
    return { ok: true, prepared: prepare(request, limits) };
  } catch (error) {
    if (EvalServiceError.isEvalServiceError(error)) return { ok: false, code: error.code as PreparationErrorCode, details: { ...error.details } };
    return { ok: false, code: 'evaluation_request_validation_failed', details: {} };
  }
}

function prepare(input: unknown, limits: PreparationLimits): PreparedEvalRequest {
  const request = prewalkRequest(input);
  const own = readOwnData(request, REQUEST_KEYS);
  if (own === null) throw new EvalServiceError('invalid_eval_request', { reason: 'not_object' });
  if (own.unknown.length > 0) throw new EvalServiceError('unknown_eval_request_fields', optionFailureDetails(own.unknown));
  const set = prepareSet(own.values.set);
  const agent = own.values.agent;
  if (!isValidId(agent)) throw new EvalServiceError('invalid_eval_agent');
  const metrics = prepareMetrics(own.values.metrics, set);
  const options = prepareOptions(own.values.options, limits);
  const metadata = prepareMetadata(own.values.metadata);

  const setText = canonicalJson(set);
  const restText = canonicalJson({ agent, metadata, metrics, options });
  const setBytes = Buffer.byteLength(setText, 'utf8');
  const requestBytes = Buffer.byteLength(restText, 'utf8') + SET_MEMBER_BYTES + setBytes;
  if (requestBytes > EVAL_REQUEST_LIMITS.maxStringBytes) throw new EvalServiceError('evaluation_request_limit_exceeded', { limit: 'bytes' });
  // the parsed canonical texts are the normal form: what was digested is exactly what is handed on
  const rest = JSON.parse(restText) as { agent: string; metadata: JsonObject; metrics: EvalMetric[]; options: PreparedEvalRequest['options'] };
  return {
    set: JSON.parse(setText) as EvalSet,
    set_digest: sha256Hex(setText),
    set_bytes: setBytes,
    agent: rest.agent,
    metrics: rest.metrics,
    options: rest.options,
    metadata: rest.metadata,
    request_bytes: requestBytes,
  };
}

function prepareSet(value: unknown): EvalSet {
  const own = readOwnData(value, SET_KEYS);
  if (own === null) throw invalidSet('set');
  if (own.unknown.length > 0) throw invalidSet('fields', optionFailureDetails(own.unknown));
  const { id, version, cases } = own.values;
  if (!isBoundedString(id, EVAL_SET_LIMITS.maxIdBytes)) throw invalidSet('id');
  if (!isBoundedString(version, EVAL_SET_LIMITS.maxVersionBytes)) throw invalidSet('version');
  if (!Array.isArray(cases) || cases.length === 0 || cases.length > EVAL_SET_LIMITS.maxCases) throw invalidSet('cases');
  const seen = new Set<string>();
  const prepared = cases.map((item: unknown, index) => {
    const evalCase = prepareCase(item, index);
    if (seen.has(evalCase.case_id)) throw invalidSet('duplicate_case_id', { index });
    seen.add(evalCase.case_id);
    return evalCase;
  });
  return { id, version, cases: prepared };
}

function prepareCase(value: unknown, index: number): EvalCase {
  const own = readOwnData(value, CASE_KEYS);
  if (own === null) throw invalidSet('case', { index });
  if (own.unknown.length > 0) throw invalidSet('fields', { index, ...optionFailureDetails(own.unknown) });
  const { case_id: caseId, input, expected_output: expectedOutput, expected_tool_calls: expectedToolCalls } = own.values;
  if (!isBoundedString(caseId, EVAL_SET_LIMITS.maxCaseIdBytes)) throw invalidSet('case_id', { index });
  if (typeof input !== 'string' && userContent(input) === null) throw invalidSet('input', { index });
  if (expectedOutput !== undefined && typeof expectedOutput !== 'string') throw invalidSet('expected_output', { index });
  const calls = expectedToolCalls === undefined ? undefined : toolCalls(expectedToolCalls);
  if (calls === null) throw invalidSet('expected_tool_calls', { index });
  return {
    case_id: caseId,
    input: input as JsonValue,
    ...(expectedOutput === undefined ? {} : { expected_output: expectedOutput }),
    ...(calls === undefined ? {} : { expected_tool_calls: calls }),
  };
}

/** `[{name, args}]` with a non-empty `name` and an object `args`, else `null`. */
function toolCalls(value: unknown): ExpectedToolCall[] | null {
  if (!Array.isArray(value)) return null;
  const calls: ExpectedToolCall[] = [];
  for (const item of value) {
    const own = readOwnData(item, ['name', 'args']);
    if (own === null || own.unknown.length > 0) return null;
    const { name, args } = own.values;
    if (typeof name !== 'string' || name.length === 0 || !isPlainObject(args)) return null;
    calls.push({ name, args: args as JsonObject });
  }
  return calls;
}

function prepareMetrics(value: unknown, set: EvalSet): EvalMetric[] {
  if (value === undefined || !Array.isArray(value) || value.length === 0 || value.length > MAX_EVAL_METRICS) throw invalidMetrics('metrics');
  const names = new Set<EvalMetricName>();
  return value.map((item: unknown, index) => {
    const metric = prepareMetric(item, index);
    if (names.has(metric.name)) throw invalidMetrics('duplicate_name', { index });
    names.add(metric.name);
    if (!set.cases.some((evalCase) => appliesTo(metric.name, evalCase))) throw invalidMetrics('not_applicable', { index });
    return metric;
  });
}

function prepareMetric(value: unknown, index: number): EvalMetric {
  const own = readOwnData(value, METRIC_KEYS);
  if (own === null) throw invalidMetrics('metric', { index });
  if (own.unknown.length > 0) throw invalidMetrics('fields', { index, ...optionFailureDetails(own.unknown) });
  const { name, threshold, match } = own.values;
  if (!METRIC_NAMES.includes(name as EvalMetricName)) throw invalidMetrics('name', { index });
  const metricName = name as EvalMetricName;
  if (threshold !== undefined && !(typeof threshold === 'number' && threshold >= 0 && threshold <= 1)) throw invalidMetrics('threshold', { index });
  const resolvedThreshold = (threshold as number | undefined) ?? METRIC_DEFAULTS[metricName];
  if (metricName !== 'response_match') {
    if (match !== undefined) throw invalidMetrics('match', { index });
    return { name: metricName, threshold: resolvedThreshold };
  }
  if (match !== undefined && match !== 'rouge_1' && match !== 'exact') throw invalidMetrics('match', { index });
  return { name: metricName, threshold: resolvedThreshold, match: match ?? METRIC_DEFAULTS.match };
}

/** `response_match` scores cases with an `expected_output`; the trajectory metrics those with `expected_tool_calls`. */
function appliesTo(metric: EvalMetricName, evalCase: EvalCase): boolean {
  return metric === 'response_match' ? evalCase.expected_output !== undefined : evalCase.expected_tool_calls !== undefined;
}

function prepareOptions(value: unknown, limits: PreparationLimits): PreparedEvalRequest['options'] {
  if (value === undefined) return {};
  const own = readOwnData(value, ['case_timeout_ms']);
  if (own === null) throw new EvalServiceError('invalid_eval_options', { reason: 'options' });
  if (own.unknown.length > 0) throw new EvalServiceError('invalid_eval_options', { reason: 'fields', ...optionFailureDetails(own.unknown) });
  const caseTimeoutMs = own.values.case_timeout_ms;
  if (caseTimeoutMs === undefined) return {};
  if (!integerIn(1, limits.taskTimeoutMs)(caseTimeoutMs)) throw new EvalServiceError('invalid_eval_options', { reason: 'case_timeout_ms' });
  return { case_timeout_ms: caseTimeoutMs as number };
}

/**
 * `metadata` (default `{}`) with every value under a secret key, at any depth, replaced by
 * `"[redacted]"`. It works on the pre-walk's private copy in place, iteratively.
 */
function prepareMetadata(value: unknown): JsonObject {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw new EvalServiceError('invalid_eval_request', { reason: 'metadata' });
  const pending: object[] = [value];
  for (let container = pending.pop(); container !== undefined; container = pending.pop()) {
    const members = container as Record<string, unknown>;
    const isArray = Array.isArray(container);
    for (const key of Object.keys(container)) {
      if (!isArray && SECRET_KEY.test(key)) members[key] = REDACTED;
      else if (typeof members[key] === 'object' && members[key] !== null) pending.push(members[key] as object);
    }
  }
  return value as JsonObject;
}

/** A string of 1..`maxBytes` UTF-8 bytes (U+0000 and lone surrogates were refused by the pre-walk). */
function isBoundedString(value: unknown, maxBytes: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= maxBytes && Buffer.byteLength(value, 'utf8') <= maxBytes;
}

const invalidSet = (reason: string, extra: ErrorDetails = {}): EvalServiceError => new EvalServiceError('invalid_eval_set', { reason, ...extra });
const invalidMetrics = (reason: string, extra: ErrorDetails = {}): EvalServiceError => new EvalServiceError('invalid_eval_metrics', { reason, ...extra });

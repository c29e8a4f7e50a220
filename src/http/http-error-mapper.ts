import { STATUS_CODES } from 'node:http';
import type { AgentRuntimeError, ErrorDetails } from '../shared/errors/agent-runtime-error';

/** How one error code answers over HTTP. */
export interface HttpErrorRule {
  /** HTTP status of the answer. */
  readonly status: number;
  /**
   * Send `Retry-After` with it: `ceil(details.retry_after_ms / 1000)` seconds when the error carries
   * that detail (a rate limit knows when it allows the request), else 1. @default false
   */
  readonly retryAfter?: boolean;
  /** Keys of the error's `details` a client may see (all others are left out). @default none */
  readonly details?: readonly string[];
}

/** The rule of a code whose answer depends on the error's details (the Runner's `admission_failed`). */
export type HttpErrorRuleByDetails = (details: ErrorDetails | undefined) => HttpErrorRule;

/** Every code of a module and its answer: a code without a rule does not compile. */
export type HttpErrorTable<Code extends string> = { readonly [C in Code]: HttpErrorRule | HttpErrorRuleByDetails };

/**
 * What every error class of the package carries as statics, so that any error it throws brings its
 * own HTTP mapping and the exception filter knows no module: the codes of its union, as a runtime
 * list, and the answer of each.
 */
export interface HttpMappedErrorClass<Code extends string = string> {
  readonly codes: readonly Code[];
  readonly httpAnswers: HttpErrorTable<Code>;
}

/** The one HTTP error body of the package. */
export interface HttpErrorBody {
  readonly status_code: number;
  /** The reason phrase of `status_code`. */
  readonly error: string;
  readonly code: string;
  readonly details?: ErrorDetails;
}

/** An error's HTTP form: status, whether `Retry-After` goes with it, and the body. */
export interface HttpErrorAnswer<Body extends HttpErrorBody = HttpErrorBody> {
  readonly status: number;
  readonly retryAfter: boolean;
  /** The `Retry-After` seconds the error asks for (from `details.retry_after_ms`); absent means 1. */
  readonly retryAfterSeconds?: number;
  readonly body: Body;
}

/** The value of the `Retry-After` header of an answer, or `undefined` when it sends none. */
export function retryAfterHeader(answer: { readonly retryAfter: boolean; readonly retryAfterSeconds?: number }): string | undefined {
  return answer.retryAfter ? String(answer.retryAfterSeconds ?? 1) : undefined;
}

/**
 * Whole seconds of `details.retry_after_ms` rounded up (spec 09 §5), at least 1 so a client never
 * reads "retry now"; `undefined` when the detail is absent or not a finite number ≥ 0.
 */
export function retryAfterSecondsOf(details: ErrorDetails | undefined): number | undefined {
  const ms = details !== undefined && Object.hasOwn(details, 'retry_after_ms') ? details.retry_after_ms : undefined;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return undefined;
  return Math.max(1, Math.ceil(ms / 1000));
}

const EXTRA_PHRASES: Readonly<Record<number, string>> = { 499: 'Client Closed Request' };

/** The reason phrase of an HTTP status, e.g. `Service Unavailable` for 503. */
export function reasonPhrase(status: number): string {
  return EXTRA_PHRASES[status] ?? STATUS_CODES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request');
}

/** `{status_code, error, code, details?}`, frozen; `details` only when it has keys. */
export function httpErrorBody(status: number, code: string, details?: ErrorDetails): HttpErrorBody {
  const body: HttpErrorBody = details && Object.keys(details).length > 0
    ? { status_code: status, error: reasonPhrase(status), code, details: Object.freeze({ ...details }) }
    : { status_code: status, error: reasonPhrase(status), code };
  return Object.freeze(body);
}

/** The rule of `code` in `table` given the error's details, or `undefined` when the table has none. */
export function httpErrorRule(table: HttpErrorTable<string>, code: string, details: ErrorDetails | undefined): HttpErrorRule | undefined {
  if (!Object.hasOwn(table, code)) return undefined;
  const rule = table[code];
  return typeof rule === 'function' ? rule(details) : rule;
}

/**
 * The answer for `error` by `table`, which has a rule for every code of its union: the rule's status
 * and only the detail keys the rule names, so nothing a module did not declare safe reaches a client.
 */
export function httpErrorAnswer<Code extends string>(error: AgentRuntimeError<Code>, table: HttpErrorTable<Code>): HttpErrorAnswer {
  const rule = httpErrorRule(table, error.code, error.details);
  if (rule === undefined) throw new TypeError(`no HTTP answer for the code ${error.code}`);
  return answerOf(error, rule);
}

/**
 * The answer for an error of this package by the table its class carries
 * ({@link HttpMappedErrorClass}), or `undefined` for a class without one (an application's own
 * subclass of `AgentRuntimeError`).
 */
export function agentRuntimeErrorAnswer(error: AgentRuntimeError<string>): HttpErrorAnswer | undefined {
  const table = (error.constructor as Partial<HttpMappedErrorClass> | undefined)?.httpAnswers;
  const rule = typeof table === 'object' && table !== null ? httpErrorRule(table, error.code, error.details) : undefined;
  return rule === undefined ? undefined : answerOf(error, rule);
}

/** True for a body of the package's shape (extra keys, such as a policy decision summary, allowed). */
export function isHttpErrorBody(value: unknown): value is HttpErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return typeof body.status_code === 'number' && typeof body.error === 'string' && typeof body.code === 'string';
}

function answerOf(error: AgentRuntimeError<string>, rule: HttpErrorRule): HttpErrorAnswer {
  const body = httpErrorBody(rule.status, error.code, shownDetails(error.details, rule.details));
  const seconds = rule.retryAfter === true ? retryAfterSecondsOf(error.details) : undefined;
  return Object.freeze(seconds === undefined ? { status: rule.status, retryAfter: rule.retryAfter === true, body } : { status: rule.status, retryAfter: true, retryAfterSeconds: seconds, body });
}

function shownDetails(details: ErrorDetails | undefined, keys: readonly string[] | undefined): ErrorDetails | undefined {
  if (!details || !keys || keys.length === 0) return undefined;
  const shown: Record<string, ErrorDetails[string]> = {};
  for (const key of keys) if (Object.hasOwn(details, key)) shown[key] = details[key];
  return shown;
}

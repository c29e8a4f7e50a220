import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import type { AgentRuntimeError, ErrorDetails } from '../shared/errors/agent-runtime-error';

/** How one error code answers over HTTP. */
export interface HttpErrorRule {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Send `Retry-After: 1` with it. @default false */
  readonly retryAfter?: boolean;
  /** Keys of the error's `details` a client may see (all others are left out). @default none */
  readonly details?: readonly string[];
}

/** A module's codes and their answers; a code left out answers 500 with the code only. */
export type HttpErrorTable<Code extends string> = { readonly [C in Code]?: HttpErrorRule };

/** The one HTTP error body of the package. */
export interface HttpErrorBody {
  readonly status_code: number;
  /** The reason phrase of `status_code`. */
  readonly error: string;
  readonly code: string;
  readonly details?: ErrorDetails;
}

/** An error's HTTP form: status, whether `Retry-After: 1` goes with it, and the body. */
export interface HttpErrorAnswer<Body extends HttpErrorBody = HttpErrorBody> {
  readonly status: number;
  readonly retryAfter: boolean;
  readonly body: Body;
}

const INTERNAL: HttpErrorRule = { status: 500 };
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

/**
 * The answer for `error` by its module's `table`: the rule of its code (500 for a code the table
 * leaves out) and only the detail keys the rule names, so nothing a module did not declare safe
 * reaches a client.
 */
export function httpErrorAnswer<Code extends string>(error: AgentRuntimeError<Code>, table: HttpErrorTable<Code>): HttpErrorAnswer {
  const rule = table[error.code] ?? INTERNAL;
  return Object.freeze({ status: rule.status, retryAfter: rule.retryAfter === true, body: httpErrorBody(rule.status, error.code, shownDetails(error.details, rule.details)) });
}

/** The throwable form of an answer; the thrower sets `Retry-After` when `answer.retryAfter`. */
export function httpErrorException(answer: HttpErrorAnswer): HttpException {
  return new HttpException(answer.body, answer.status);
}

/** True for a body of the package's shape (extra keys, such as a policy decision summary, allowed). */
export function isHttpErrorBody(value: unknown): value is HttpErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return typeof body.status_code === 'number' && typeof body.error === 'string' && typeof body.code === 'string';
}

function shownDetails(details: ErrorDetails | undefined, keys: readonly string[] | undefined): ErrorDetails | undefined {
  if (!details || !keys || keys.length === 0) return undefined;
  const shown: Record<string, ErrorDetails[string]> = {};
  for (const key of keys) if (Object.hasOwn(details, key)) shown[key] = details[key];
  return shown;
}

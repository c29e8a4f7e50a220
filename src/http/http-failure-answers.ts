import type { ErrorDetails } from '../shared/errors/agent-runtime-error';
import { httpErrorAnswer, httpErrorBody, isHttpErrorBody, type HttpErrorAnswer } from './http-error-mapper';
import { HttpRequestError, type HttpRequestErrorCode } from './http-request.errors';
import { JSON_BODY_VERIFIED } from './json-depth-limit';

/** What this file reads of Nest's `HttpException`. */
export interface HttpExceptionLike {
  getStatus(): number;
  getResponse(): string | object;
}

/** The `type` body-parser (raw-body, http-errors) gives each of its failures, and our code for it. */
const BODY_PARSER_TYPES: Readonly<Record<string, HttpRequestErrorCode>> = Object.freeze({
  'entity.parse.failed': 'invalid_json',
  'entity.too.large': 'body_too_large',
  'parameters.too.many': 'too_many_parameters',
  'charset.unsupported': 'unsupported_charset',
  'encoding.unsupported': 'unsupported_content_encoding',
  'request.size.invalid': 'invalid_content_length',
  'request.aborted': 'request_aborted',
  'entity.verify.failed': 'invalid_request_body',
});

/** zlib's error codes: `Z_DATA_ERROR`, `Z_BUF_ERROR`, …, and Brotli's `ERR__ERROR_FORMAT_…`. */
const ZLIB_ERROR = /^(?:Z_[A-Z_]+|ERR__ERROR_[A-Z0-9_]+|ERR_BROTLI[A-Z0-9_]*)$/;

const STATUS_CODE_NAMES: Readonly<Record<number, string>> = Object.freeze({ 500: 'internal_error' });

/** The answer of the package for anything it does not know: 500 `internal_error`, nothing else. */
export const INTERNAL_ERROR_ANSWER: HttpErrorAnswer = Object.freeze({ status: 500, retryAfter: false, body: httpErrorBody(500, 'internal_error') });

/**
 * The answer to a body-parser failure, by its `type` and never its message (which quotes the body),
 * or `undefined` when `error` is not one.
 */
export function bodyParserAnswer(error: unknown): HttpErrorAnswer | undefined {
  if (!(error instanceof Error)) return undefined;
  const { type, status, limit, code: errorCode } = error as Error & { type?: unknown; status?: unknown; limit?: unknown; code?: unknown };
  // a body that does not inflate: body-parser hands on zlib's own error, marked 400 but without a type
  if (status === 400 && typeof errorCode === 'string' && ZLIB_ERROR.test(errorCode)) {
    return requestErrorAnswer('invalid_compressed_body');
  }
  if (typeof type !== 'string' || typeof status !== 'number') return undefined;
  const code = Object.hasOwn(BODY_PARSER_TYPES, type) ? BODY_PARSER_TYPES[type] : undefined;
  if (!code) return status >= 400 && status < 500 ? statusAnswer(status) : INTERNAL_ERROR_ANSWER;
  return requestErrorAnswer(code, typeof limit === 'number' ? { limit } : undefined);
}

/**
 * The answer to an `HttpException`: its body when it already has the package's shape, or is an
 * application's own object (a terminus health report, say); otherwise (Nest's default
 * `{statusCode, message}`, a string) its status with a code and without the message, which may
 * quote the request (a JSON syntax error, a path, a validation message). `ValidationPipe`'s default
 * list of messages becomes `invalid_request_body`, and a parse failure after the depth check
 * `invalid_json`.
 */
export function httpExceptionAnswer(exception: HttpExceptionLike, request: unknown): HttpErrorAnswer | { status: number; retryAfter: false; body: unknown } {
  const status = exception.getStatus();
  const response = exception.getResponse();
  if (isHttpErrorBody(response) || (typeof response === 'object' && response !== null && !isNestDefaultBody(response))) {
    return { status, retryAfter: false, body: response };
  }
  const message = typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  if (status === 400 && Array.isArray(message)) return requestErrorAnswer('invalid_request_body');
  if (status === 400 && isUnparsedVerifiedBody(request)) return requestErrorAnswer('invalid_json');
  return statusAnswer(status);
}

/** The answer of an {@link HttpRequestError} of `code`. */
export function requestErrorAnswer(code: HttpRequestErrorCode, details?: ErrorDetails): HttpErrorAnswer {
  return httpErrorAnswer(new HttpRequestError(code, details), HttpRequestError.httpAnswers);
}

function statusAnswer(status: number): HttpErrorAnswer {
  const code = STATUS_CODE_NAMES[status] ?? snakeCase(httpErrorBody(status, '').error);
  return Object.freeze({ status, retryAfter: false, body: httpErrorBody(status, code) });
}

/** `HttpException`'s own body: `{statusCode, message, error?}` and nothing else. */
function isNestDefaultBody(response: object): boolean {
  const keys = Object.keys(response);
  return 'statusCode' in response && 'message' in response && keys.every((key) => key === 'statusCode' || key === 'message' || key === 'error');
}

/** The JSON body was read and passed the depth check, yet no body was set: the parser refused it. */
function isUnparsedVerifiedBody(request: unknown): boolean {
  const candidate = request as { [JSON_BODY_VERIFIED]?: true; body?: unknown } | undefined;
  return candidate?.[JSON_BODY_VERIFIED] === true && candidate.body === undefined;
}

function snakeCase(phrase: string): string {
  return phrase.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

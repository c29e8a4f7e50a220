import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';
import type { HttpErrorTable } from './http-error-mapper';

const HTTP_REQUEST_ERROR_CODES = Object.freeze([
  'invalid_json',
  'body_too_deep',
  'body_too_large',
  'too_many_parameters',
  'unsupported_charset',
  'unsupported_content_encoding',
  'invalid_compressed_body',
  'invalid_content_length',
  'request_aborted',
  'invalid_request_body',
  'unsupported_media_type',
] as const);

/** Every code an {@link HttpRequestError} carries: what was wrong with the request itself. */
export type HttpRequestErrorCode = (typeof HTTP_REQUEST_ERROR_CODES)[number];

/** The error of a request the application could not read: a code, never what the client sent. */
export class HttpRequestError extends AgentRuntimeError<HttpRequestErrorCode> {
  /** Every code of {@link HttpRequestErrorCode}. */
  static readonly codes: readonly HttpRequestErrorCode[] = HTTP_REQUEST_ERROR_CODES;

  /** The HTTP answer of each code. */
  static readonly httpAnswers: HttpErrorTable<HttpRequestErrorCode> = Object.freeze({
    invalid_json: { status: 400 },
    body_too_deep: { status: 400, details: ['max_depth'] },
    body_too_large: { status: 413, details: ['limit'] },
    too_many_parameters: { status: 413 },
    unsupported_charset: { status: 415 },
    unsupported_content_encoding: { status: 415 },
    invalid_compressed_body: { status: 400 },
    invalid_content_length: { status: 400 },
    request_aborted: { status: 400 },
    invalid_request_body: { status: 400, details: ['field', 'fields', 'unknown_fields'] },
    unsupported_media_type: { status: 415 },
  });

  constructor(code: HttpRequestErrorCode, details?: ErrorDetails) {
    super('HttpRequestError', code, details);
  }

  // body-parser copies the raw body onto the error its `verify` hook throws; this one never keeps it
  get body(): undefined {
    return undefined;
  }
  set body(_ignored: unknown) {}
}

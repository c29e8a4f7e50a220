import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const JSON_ERROR_CODES = Object.freeze(['unsupported_json_term', 'invalid_utf8', 'invalid_measure_limit'] as const);

/** Every code a {@link JsonError} carries (spec 02 §2). */
export type JsonErrorCode = (typeof JSON_ERROR_CODES)[number];

/**
 * The error of canonical JSON and `measure`: `unsupported_json_term` (`{path, kind}`), `invalid_utf8`
 * (`{path}`) or `invalid_measure_limit`. A path lists keys and indices only, never values. Each
 * module maps it to its own codes.
 */
export class JsonError extends AgentRuntimeError<JsonErrorCode> {
  /** Every code of {@link JsonErrorCode}. */
  static readonly codes: readonly JsonErrorCode[] = JSON_ERROR_CODES;

  /**
   * The HTTP answer of each code (the shape of `src/http`'s table, which this kernel sits below):
   * one that escapes the module that should have mapped it is a fault of the application.
   */
  static readonly httpAnswers: { readonly [C in JsonErrorCode]: { readonly status: number } } = Object.freeze({
    unsupported_json_term: { status: 500 },
    invalid_utf8: { status: 500 },
    invalid_measure_limit: { status: 500 },
  });

  constructor(code: JsonErrorCode, details?: ErrorDetails) {
    super('JsonError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isJsonError(value: unknown): value is JsonError {
    return AgentRuntimeError.isAgentRuntimeError(value, JsonError);
  }
}

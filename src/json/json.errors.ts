import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code a {@link JsonError} carries (spec 02 §2). */
export type JsonErrorCode = 'unsupported_json_term' | 'invalid_utf8' | 'invalid_measure_limit';

/**
 * The error of canonical JSON and `measure`: `unsupported_json_term` (`{path, kind}`), `invalid_utf8`
 * (`{path}`) or `invalid_measure_limit`. A path lists keys and indices only, never values. Each
 * module maps it to its own codes.
 */
export class JsonError extends AgentRuntimeError<JsonErrorCode> {
  constructor(code: JsonErrorCode, details?: ErrorDetails) {
    super('JsonError', code, details);
  }

  /** Brand check that runs no user code (no Proxy trap, no prototype walk). */
  static isJsonError(value: unknown): value is JsonError {
    return AgentRuntimeError.isAgentRuntimeError(value, JsonError);
  }
}

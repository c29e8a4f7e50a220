import { AgentRuntimeError, type ErrorDetails } from '../../shared/errors/agent-runtime-error';

/**
 * Every code a {@link ConsoleError} carries: `invalid_console_options` (`{field}` or `{fields}`) for
 * options that break their rules, `console_guard_required` when neither a `guard` nor an explicit
 * `allowUnauthenticated: true` was given.
 */
export type ConsoleErrorCode = 'invalid_console_options' | 'console_guard_required';

/** The error of the operator console: thrown by `ConsoleModule.forRoot`, so the app does not start. */
export class ConsoleError extends AgentRuntimeError<ConsoleErrorCode> {
  constructor(code: ConsoleErrorCode, details?: ErrorDetails) {
    super('ConsoleError', code, details);
  }

  /** True for a `ConsoleError` built by this package (a brand check, see `AgentRuntimeError`). */
  static isConsoleError(value: unknown): value is ConsoleError {
    return AgentRuntimeError.isAgentRuntimeError(value, ConsoleError);
  }
}

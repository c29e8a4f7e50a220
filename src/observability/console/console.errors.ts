import type { HttpErrorTable } from '../../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../../shared/errors/agent-runtime-error';

const CONSOLE_ERROR_CODES = Object.freeze(['invalid_console_options', 'console_guard_required'] as const);

/**
 * Every code a {@link ConsoleError} carries: `invalid_console_options` (`{field}` or `{fields}`) for
 * options that break their rules, `console_guard_required` when neither a `guard`, a `resolvePrincipal` nor an explicit
 * `allowUnauthenticated: true` was given.
 */
export type ConsoleErrorCode = (typeof CONSOLE_ERROR_CODES)[number];

/** The error of the operator console: thrown by `ConsoleModule.forRoot`, so the app does not start. */
export class ConsoleError extends AgentRuntimeError<ConsoleErrorCode> {
  /** Every code of {@link ConsoleErrorCode}. */
  static readonly codes: readonly ConsoleErrorCode[] = CONSOLE_ERROR_CODES;

  /** The HTTP answer of each code: both are start-up faults of the application. */
  static readonly httpAnswers: HttpErrorTable<ConsoleErrorCode> = Object.freeze({
    invalid_console_options: { status: 500 },
    console_guard_required: { status: 500 },
  });

  constructor(code: ConsoleErrorCode, details?: ErrorDetails) {
    super('ConsoleError', code, details);
  }

  /** True for a `ConsoleError` built by this package (a brand check, see `AgentRuntimeError`). */
  static isConsoleError(value: unknown): value is ConsoleError {
    return AgentRuntimeError.isAgentRuntimeError(value, ConsoleError);
  }
}

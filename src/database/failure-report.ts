import { inspect } from 'node:util';
import { classifyFailure } from './postgres-failure';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';

/** Controls and line separators that JSON.stringify leaves raw or that could end or colour a line. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const ERROR_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * The lines an operator command (`npm start`, the migration CLI) prints when it fails, each starting
 * with `prefix`: first the error's code (with its
 * scalar details), then every schema mismatch on a line of its own as
 * `{"table":…,"property":…,"expected":…,"actual":…}`, led by `"module":…` when the mismatch names
 * its module (the one start-up report of `StartupSchemaCheck`). An error that is not this package's prints
 * only its class name and database codes (SQLSTATE, socket error), never the driver's text.
 *
 * @example
 * for (const line of failureReportLines('reference service failed to start:', error)) console.error(line);
 */
export function failureReportLines(prefix: string, error: unknown): string[] {
  if (!AgentRuntimeError.isAgentRuntimeError(error)) return [`${prefix} ${foreignError(error)}`];
  const lines = [`${prefix} ${escape(error.message)}`];
  const mismatches = error.details?.mismatches;
  if (Array.isArray(mismatches)) {
    for (const item of mismatches as readonly unknown[]) {
      const record = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
      const line = { ...(record.module === undefined ? {} : { module: field(record.module) }), table: field(record.table), property: field(record.property), expected: field(record.expected), actual: field(record.actual) };
      lines.push(escape(JSON.stringify(line)));
    }
  }
  return lines;
}

/**
 * Makes `error` print as its report: its `stack`, and what `util.inspect` shows, become the lines of
 * {@link failureReportLines} (prefix: the error's name), so Node's print of an uncaught rejection,
 * Nest's logger (`ExceptionHandler`) or any logger that prints the stack shows the code and every
 * mismatch once, and no frame. Returns the same error.
 */
export function asStartupReport<E extends AgentRuntimeError<string>>(error: E): E {
  const report = failureReportLines(`${error.name}:`, error).join('\n');
  Object.defineProperty(error, 'stack', { value: report, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(error, inspect.custom, { value: () => report, configurable: true, enumerable: false });
  return error;
}

function foreignError(error: unknown): string {
  const name = error instanceof Error && ERROR_NAME.test(error.name) ? error.name : 'unexpected_error';
  const { sqlstate, socket_error } = classifyFailure(error).codes;
  const codes = [sqlstate === null ? '' : ` sqlstate ${sqlstate}`, socket_error === null ? '' : ` socket_error ${socket_error}`].join('');
  return `${name}${codes}`;
}

function field(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** JSON-style `\u00hh` escapes, so the text stays on one line and valid inside a JSON line. */
function escape(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

import { classifyFailure } from '../database/postgres-failure';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';

/** The exit codes of the bin: each command's documented meaning of them. */
export const CliExit = Object.freeze({
  /** The command did what it was asked, and its check (if any) passed. */
  ok: 0,
  /** The check failed: migrations pending (`status`), a broken audit chain, a regressed evaluation. */
  checkFailed: 1,
  /** The command line is wrong, or names something that does not exist. */
  usage: 2,
  /** The database is unreachable, or its schema is not what the command needs. */
  unavailable: 3,
} as const);

/** One of the values of {@link CliExit}. */
export type CliExitCode = (typeof CliExit)[keyof typeof CliExit];

/**
 * A failure the bin reports as one line, `nest-agent-runtime: <code>: <message>`, and an exit code.
 * The message is built by this package from codes and names, never from a driver's text or the URL.
 */
export class CliFailure extends Error {
  constructor(
    readonly code: string,
    readonly detail: string,
    readonly exitCode: Exclude<CliExitCode, 0>,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'CliFailure';
  }
}

/** A usage failure (exit 2). */
export const usageFailure = (code: string, detail: string): CliFailure => new CliFailure(code, detail, CliExit.usage);


/** `error` as a {@link CliFailure}: a thrown `CliFailure` as it is, the package's errors by code, anything else by its database codes. */
export function cliFailureOf(error: unknown): CliFailure {
  if (error instanceof CliFailure) return error;
  if (AgentRuntimeError.isAgentRuntimeError(error)) return packageFailure(error);
  const failure = classifyFailure(error);
  if (failure.connection) return new CliFailure('database_unreachable', `the database stopped answering${codesText(failure.codes)}`, CliExit.unavailable);
  if (failure.codes.sqlstate?.startsWith('42')) {
    return new CliFailure('schema_mismatch', `a table or column the command needs is missing${codesText(failure.codes)}: run the migrations of its module`, CliExit.unavailable);
  }
  const name = error instanceof Error && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.name) ? error.name : 'unknown';
  return new CliFailure('unexpected_failure', `${name}${codesText(failure.codes)}`, CliExit.unavailable);
}

/** A failure to connect: whatever the cause (refused, authentication, no such database), the database is out of reach. */
export function connectFailure(error: unknown): CliFailure {
  return new CliFailure('database_unreachable', `could not connect to the database${codesText(classifyFailure(error).codes)}`, CliExit.unavailable);
}

function packageFailure(error: AgentRuntimeError<string>): CliFailure {
  const mismatches = error.details?.mismatches;
  if (error.code === 'schema_mismatch' && Array.isArray(mismatches)) {
    const lines = (mismatches as ReadonlyArray<Record<string, unknown>>).map((item) => `${String(item.table)} ${String(item.property)}: expected ${String(item.expected)}, actual ${String(item.actual)}`);
    return new CliFailure('schema_mismatch', `the schema does not match (${lines.length}): ${lines.join('; ')}`, CliExit.unavailable);
  }
  const detail = error.details === undefined ? error.name : `${error.name} ${JSON.stringify(error.details)}`;
  return new CliFailure(error.code, detail, CliExit.unavailable);
}

function codesText(codes: { sqlstate: string | null; socket_error: string | null }): string {
  const parts = [codes.socket_error, codes.sqlstate === null ? null : `sqlstate ${codes.sqlstate}`].filter((part) => part !== null);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** Controls and line separators escaped, so the report stays one line. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

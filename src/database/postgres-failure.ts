/** The codes of a database failure that may be kept: never the database's text. */
export type PostgresFailureCodes = {
  /** Five-character SQLSTATE, when the server (or the driver error TypeORM wraps) gave one. */
  readonly sqlstate: string | null;
  /** Node socket error code (`ECONNREFUSED`, …) or `connect_timeout`, when the failure was one. */
  readonly socket_error: string | null;
};

/** What {@link classifyFailure} says about an error. */
export interface PostgresFailure {
  /** The connection failed or was lost: a new attempt on a new connection may succeed. */
  readonly connection: boolean;
  readonly codes: PostgresFailureCodes;
}

const SOCKET_ERRORS = new Set([
  'connect_timeout',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** `57P01`/`57P02` end a pooled session when the server shuts down or crashes; the next attempt gets a new one. */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** node-postgres reports a lost or timed-out connection with these messages and no code. */
const PG_CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Whether `error` (or the driver error TypeORM wraps, or a `cause`) is a connection failure, with
 * the only codes that may leave the process: SQLSTATE (class `08`, `57P01`–`57P03` are connection
 * failures) and the Node socket code. Reads plain properties only; survives cycles.
 */
export function classifyFailure(error: unknown): PostgresFailure {
  let sqlstate: string | null = null;
  let socketError: string | null = null;
  let pgConnectionMessage = false;
  const seen = new Set<unknown>();
  for (let current: unknown = error; typeof current === 'object' && current !== null && !seen.has(current); ) {
    seen.add(current);
    const { code, message, driverError, cause } = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof code === 'string' && SQLSTATE.test(code)) sqlstate ??= code;
    else if (typeof code === 'string' && SOCKET_ERRORS.has(code)) socketError ??= code;
    if (typeof message === 'string' && PG_CONNECTION_MESSAGE.test(message)) pgConnectionMessage = true;
    current = driverError ?? cause;
  }
  const connection =
    socketError !== null || pgConnectionMessage || (sqlstate !== null && (sqlstate.startsWith('08') || CONNECTION_SQLSTATES.has(sqlstate)));
  return { connection, codes: { sqlstate, socket_error: socketError } };
}

/** SQLSTATEs after which Postgres has rolled the transaction back: serialisation failure, deadlock, statement timeout. */
const ROLLBACK_SQLSTATES = new Set(['40001', '40P01', '57014']);

/**
 * True when nothing of the statement was committed and a retry may succeed: a rollback SQLSTATE or
 * a connection lost mid-statement.
 */
export function isRolledBack(failure: PostgresFailure): boolean {
  return failure.connection || (failure.codes.sqlstate !== null && ROLLBACK_SQLSTATES.has(failure.codes.sqlstate));
}

import type { DataSource } from 'typeorm';
import type { PostgresFailure } from '../../database/postgres-failure';
import { poolOf, type PgPool, type StatementRows } from '../../database/postgres-pool';
import { assertSchema } from '../../database/schema/schema-validator';
import { SchemaValidatorError } from '../../database/schema-validator.errors';
import { runStatement } from '../../database/statement-runner';
import { frozenJsonParse } from '../../json';
import { qualifiedTable } from '../../database/qualified-table';
import type { Clock } from '../../shared/time/clock';
import type { JsonObject, JsonValue } from '../../runner/content.types';
import { RunnerError } from '../../runner/runner.errors';
import { checkedEvent, eventListing, expectedVersion, sessionCreation, sessionListing, sessionRef, sessionServiceSettings, stateDelta, type SessionServiceSettings } from './session-arguments';
import { recordTimeMs, sessionEvent, sessionRecord, storedEvent } from './session-records';
import { SESSION_EVENT_TABLE, SESSION_EVENT_TABLE_SPEC, SESSION_TABLE, SESSION_TABLE_SPEC } from './session.schema';
import { sessionStatements, type SessionStatements } from './session-sql';
import type { ListEventsOptions, NewSessionEvent, SessionEvent, SessionEventKind, SessionRecord, SessionRef, SessionService, UpdateStateOptions } from '../../runner/session.types';

/** Options of a {@link PostgresSessionService}. */
export interface PostgresSessionServiceOptions {
  /** Source of `created_at_ms` and `updated_at_ms` (`wallNow()`); start-up retries keep the system clock. @default systemClock */
  clock?: Clock;
  /** Postgres schema holding both tables (`^[a-z_][a-z0-9_]{0,62}$`). @default the connection's current_schema() */
  schema?: string;
}

/** What a store operation is called in `session_store_failed` details. */
export type SessionStoreOperation =
  | 'start'
  | 'create_session'
  | 'get_session'
  | 'list_sessions'
  | 'delete_session'
  | 'append_event'
  | 'list_events'
  | 'update_state';

type ServiceState = 'new' | 'starting' | 'started' | 'closed';

/**
 * The durable {@link SessionService} (spec 03 §4) on the `agent_runtime_sessions` and
 * `agent_runtime_session_events` tables of migration `RunnerSessions1764700000000`. `start()`
 * validates both tables; nothing here creates or alters a table. Every operation is one statement;
 * a failure of the database is `session_store_failed` with `details.operation` and its codes only.
 *
 * @example
 * const sessions = new PostgresSessionService(dataSource);
 * await sessions.start();
 * const session = await sessions.createSession({ appName: 'helper', userId: 'u1' });
 */
export class PostgresSessionService implements SessionService {
  private readonly settings: SessionServiceSettings;
  private state: ServiceState = 'new';
  private starting: Promise<void> | null = null;
  private pool: PgPool | null = null;
  private statements: SessionStatements | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();

  /** Throws `invalid_runner_options` for unknown keys, a `clock` without `wallNow()` or a malformed `schema`. */
  constructor(
    private readonly dataSource: DataSource,
    options?: PostgresSessionServiceOptions,
  ) {
    this.settings = sessionServiceSettings(options, true);
  }

  /**
   * Validates both tables with the shared schema validator: `schema_mismatch` (`{mismatches}`)
   * listing every difference; an unreachable database, after the validator's connection retries,
   * is `session_store_failed` (`{operation: 'start', attempts, sqlstate, socket_error}`). A DataSource
   * that is not an initialised Postgres one is `invalid_runner_options` (`{field: 'dataSource'}`). A
   * failed start may be retried; calling it while started resolves at once.
   */
  start(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(notAvailable('start', 'closed'));
    if (this.state === 'started') return Promise.resolve();
    if (this.state === 'starting' && this.starting) return this.starting;
    this.state = 'starting';
    this.starting = this.startOnce().then(
      () => {
        if (this.state === 'starting') this.state = 'started';
      },
      (error: unknown) => {
        if (this.state === 'starting') this.state = 'new';
        throw error;
      },
    );
    return this.starting;
  }

  /** Refuses new operations (`session_store_failed`, `reason: 'closed'`) and waits for those in flight. The DataSource stays open. Idempotent. */
  async close(): Promise<void> {
    this.state = 'closed';
    await Promise.allSettled([...this.inFlight]);
  }

  async createSession(input: { appName: string; userId: string; sessionId?: string; state?: JsonObject }): Promise<SessionRecord> {
    const creation = sessionCreation(input);
    return this.operate('create_session', async (pool, sql) => {
      const now = recordTimeMs(this.settings.clock);
      const values = [creation.sessionId, creation.appName, creation.userId, creation.state.text, now];
      const [row] = await this.run(pool, 'create_session', sql.create, values);
      if (!row) throw new RunnerError('session_state_conflict');
      return sessionOf(row);
    });
  }

  async getSession(ref: SessionRef): Promise<SessionRecord | undefined> {
    const checked = sessionRef(ref);
    return this.operate('get_session', async (pool, sql) => {
      const [row] = await this.run(pool, 'get_session', sql.get, refValues(checked));
      return row ? sessionOf(row) : undefined;
    });
  }

  async listSessions(input: { appName: string; userId: string; limit?: number; offset?: number }): Promise<readonly SessionRecord[]> {
    const listing = sessionListing(input);
    return this.operate('list_sessions', async (pool, sql) => {
      const rows = await this.run(pool, 'list_sessions', sql.list, [listing.appName, listing.userId, listing.limit, listing.offset]);
      return Object.freeze(rows.map(sessionOf));
    });
  }

  async deleteSession(ref: SessionRef): Promise<boolean> {
    const checked = sessionRef(ref);
    return this.operate('delete_session', async (pool, sql) => (await this.run(pool, 'delete_session', sql.delete, refValues(checked))).length > 0);
  }

  async appendEvent(ref: SessionRef, event: NewSessionEvent): Promise<SessionEvent> {
    const checked = sessionRef(ref);
    const candidate = checkedEvent(event);
    return this.operate('append_event', async (pool, sql) => {
      const now = recordTimeMs(this.settings.clock);
      const values = [
        ...refValues(checked),
        candidate.event_id,
        candidate.invocation_id,
        candidate.author,
        candidate.kind,
        candidate.content.text,
        candidate.actions?.text ?? null,
        now,
      ];
      const [row] = await this.run(pool, 'append_event', sql.append, values);
      if (!row) throw new RunnerError('session_not_found');
      return storedEvent(candidate, checked.sessionId, Number(row.seq), now);
    });
  }

  async listEvents(ref: SessionRef, options?: ListEventsOptions): Promise<readonly SessionEvent[]> {
    const checked = sessionRef(ref);
    const listing = eventListing(options);
    return this.operate('list_events', async (pool, sql) => {
      const rows = await this.run(pool, 'list_events', sql.listEvents, [...refValues(checked), listing.afterSeq, listing.limit]);
      if (rows.length === 0) throw new RunnerError('session_not_found');
      return Object.freeze(rows.filter((row) => row.seq !== null).map((row) => eventOf(checked.sessionId, row)));
    });
  }

  async updateState(ref: SessionRef, delta: { readonly [key: string]: JsonValue }, options?: UpdateStateOptions): Promise<SessionRecord> {
    const checked = sessionRef(ref);
    const change = stateDelta(delta);
    const expected = expectedVersion(options);
    return this.operate('update_state', async (pool, sql) => {
      const now = recordTimeMs(this.settings.clock);
      const values = [...refValues(checked), expected, change.remove, change.set.text, now];
      const [row] = await this.run(pool, 'update_state', sql.updateState, values);
      if (!row) throw new RunnerError('session_not_found');
      if (row.ok !== true) throw new RunnerError('session_state_conflict');
      return sessionOf(row);
    });
  }

  private async startOnce(): Promise<void> {
    const pool = poolOf(this.dataSource);
    if (!pool) throw new RunnerError('invalid_runner_options', { field: 'dataSource' });
    const schema = this.settings.schema;
    try {
      await assertSchema(
        this.dataSource,
        [SESSION_TABLE_SPEC, SESSION_EVENT_TABLE_SPEC],
        schema === null ? {} : { schema },
        (mismatches) => new RunnerError('schema_mismatch', { mismatches }),
      );
    } catch (error) {
      if (error instanceof SchemaValidatorError) throw new RunnerError('session_store_failed', { operation: 'start', ...error.details });
      throw error;
    }
    // qualified, so a later change of search_path cannot redirect the statements
    const [row] = await this.run(pool, 'start', 'SELECT current_schema() AS schema', []);
    const resolved = schema ?? (row?.schema as string | null | undefined) ?? null;
    this.pool = pool;
    this.statements = sessionStatements(qualifiedTable(resolved, SESSION_TABLE), qualifiedTable(resolved, SESSION_EVENT_TABLE));
  }

  private operate<T>(operation: SessionStoreOperation, work: (pool: PgPool, sql: SessionStatements) => Promise<T>): Promise<T> {
    if (this.state !== 'started' || !this.pool || !this.statements) {
      return Promise.reject(notAvailable(operation, this.state === 'closed' ? 'closed' : 'not_started'));
    }
    const running = work(this.pool, this.statements);
    const tracked = running.catch(() => undefined);
    this.inFlight.add(tracked);
    void tracked.then(() => this.inFlight.delete(tracked));
    return running;
  }

  private run(pool: PgPool, operation: SessionStoreOperation, text: string, values: unknown[]): Promise<StatementRows> {
    return runStatement(pool, text, values, (failure) => storeFailure(operation, failure));
  }
}

/**
 * A unique violation can only be a lost race on an id (an `event_id` stored meanwhile):
 * `session_state_conflict`. Anything else is `session_store_failed` with the database's codes.
 */
function storeFailure(operation: SessionStoreOperation, failure: PostgresFailure): RunnerError {
  if (failure.codes.sqlstate === '23505') return new RunnerError('session_state_conflict');
  return new RunnerError('session_store_failed', { operation, ...failure.codes });
}

function notAvailable(operation: SessionStoreOperation, reason: 'not_started' | 'closed'): RunnerError {
  return new RunnerError('session_store_failed', { operation, reason });
}

function refValues(ref: SessionRef): [string, string, string] {
  return [ref.sessionId, ref.appName, ref.userId];
}

function sessionOf(row: Record<string, unknown>): SessionRecord {
  return sessionRecord({
    session_id: row.session_id as string,
    app_name: row.app_name as string,
    user_id: row.user_id as string,
    state: frozenJsonParse(row.state_json as string) as JsonObject,
    state_version: Number(row.state_version),
    last_seq: Number(row.last_seq),
    created_at_ms: Number(row.created_at_ms),
    updated_at_ms: Number(row.updated_at_ms),
  });
}

function eventOf(sessionId: string, row: Record<string, unknown>): SessionEvent {
  return sessionEvent({
    session_id: sessionId,
    seq: Number(row.seq),
    event_id: row.event_id as string,
    invocation_id: row.invocation_id as string,
    author: row.author as string,
    kind: row.kind as SessionEventKind,
    content: frozenJsonParse(row.content_json as string) as JsonValue,
    actions: row.actions_json === null ? undefined : (frozenJsonParse(row.actions_json as string) as JsonObject),
    created_at_ms: Number(row.created_at_ms),
  });
}

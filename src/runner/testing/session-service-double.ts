import { frozenJsonCopy } from '../../json/json-copy';
import { systemClock } from '../../shared/time/clock';
import type { JsonObject, JsonValue } from '../content.types';
import { RunnerError } from '../runner.errors';
import { newSessionId } from '../session-id';
import type { ListEventsOptions, NewSessionEvent, SessionEvent, SessionRecord, SessionRef, SessionService, UpdateStateOptions } from '../session.types';

interface StoredSession {
  record: SessionRecord;
  readonly events: SessionEvent[];
}

/**
 * The session store of the Runner's own suites: sessions and events in a map as frozen copies, with
 * the contract's ownership, `seq`, conflict and state-merge rules (spec 03 §4) and no argument checks
 * (the Runner checks what it passes). The runner may not import the services module, where the
 * session services live, so its suites run on this double; those services are pinned by
 * `describeSessionServiceContract` (`src/services/sessions/testing/`).
 */
export class SessionServiceDouble implements SessionService {
  private readonly sessions = new Map<string, StoredSession>();

  async createSession(input: { appName: string; userId: string; sessionId?: string; state?: JsonObject }): Promise<SessionRecord> {
    const sessionId = input.sessionId ?? newSessionId();
    if (this.sessions.has(sessionId)) throw new RunnerError('session_state_conflict');
    const now = systemClock.wallNow();
    const record = Object.freeze({
      session_id: sessionId,
      app_name: input.appName,
      user_id: input.userId,
      state: frozenJsonCopy(input.state ?? {}),
      state_version: 0,
      last_seq: 0,
      created_at_ms: now,
      updated_at_ms: now,
    });
    this.sessions.set(sessionId, { record, events: [] });
    return record;
  }

  async getSession(ref: SessionRef): Promise<SessionRecord | undefined> {
    return this.owned(ref)?.record;
  }

  async listSessions(input: { appName: string; userId: string }): Promise<readonly SessionRecord[]> {
    const records = [...this.sessions.values()].map(({ record }) => record).filter((record) => record.app_name === input.appName && record.user_id === input.userId);
    return Object.freeze(records.sort((a, b) => b.updated_at_ms - a.updated_at_ms));
  }

  async deleteSession(ref: SessionRef): Promise<boolean> {
    return this.owned(ref) !== undefined && this.sessions.delete(ref.sessionId);
  }

  async appendEvent(ref: SessionRef, event: NewSessionEvent): Promise<SessionEvent> {
    const stored = this.found(ref);
    if (stored.events.some((earlier) => earlier.event_id === event.event_id)) throw new RunnerError('session_state_conflict');
    const now = systemClock.wallNow();
    const seq = stored.record.last_seq + 1;
    const appended = frozenJsonCopy({ ...event, session_id: ref.sessionId, seq, created_at_ms: now }) as SessionEvent;
    stored.events.push(appended);
    stored.record = Object.freeze({ ...stored.record, last_seq: seq, updated_at_ms: now });
    return appended;
  }

  async listEvents(ref: SessionRef, options: ListEventsOptions = {}): Promise<readonly SessionEvent[]> {
    const afterSeq = options.afterSeq ?? 0;
    return Object.freeze(this.found(ref).events.slice(afterSeq, options.limit === undefined ? undefined : afterSeq + options.limit));
  }

  async updateState(ref: SessionRef, delta: { readonly [key: string]: JsonValue }, options: UpdateStateOptions = {}): Promise<SessionRecord> {
    const stored = this.found(ref);
    if (options.expectedVersion !== undefined && options.expectedVersion !== stored.record.state_version) throw new RunnerError('session_state_conflict');
    const state = new Map<string, JsonValue>(Object.entries(stored.record.state));
    for (const [key, value] of Object.entries(delta)) {
      if (value === null) state.delete(key);
      else state.set(key, value);
    }
    stored.record = Object.freeze({
      ...stored.record,
      state: frozenJsonCopy(Object.fromEntries(state)) as JsonObject,
      state_version: stored.record.state_version + 1,
      updated_at_ms: systemClock.wallNow(),
    });
    return stored.record;
  }

  private owned(ref: SessionRef): StoredSession | undefined {
    const stored = this.sessions.get(ref.sessionId);
    return stored && stored.record.app_name === ref.appName && stored.record.user_id === ref.userId ? stored : undefined;
  }

  private found(ref: SessionRef): StoredSession {
    const stored = this.owned(ref);
    if (!stored) throw new RunnerError('session_not_found');
    return stored;
  }
}

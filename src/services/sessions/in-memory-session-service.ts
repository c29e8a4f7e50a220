import type { Clock } from '../../shared/time/clock';
import type { JsonObject, JsonValue } from '../../runner/content.types';
import { RunnerError } from '../../runner/runner.errors';
import { checkedEvent, eventListing, expectedVersion, sessionCreation, sessionListing, sessionRef, sessionServiceSettings, stateDelta } from './session-arguments';
import { recordTimeMs, sessionRecord, storedEvent } from './session-records';
import type { ListEventsOptions, NewSessionEvent, SessionEvent, SessionRecord, SessionRef, SessionService, UpdateStateOptions } from '../../runner/session.types';

/** Options of an {@link InMemorySessionService}. */
export interface InMemorySessionServiceOptions {
  /** Source of `created_at_ms` and `updated_at_ms` (`wallNow()`). @default systemClock */
  clock?: Clock;
}

interface StoredSession {
  record: SessionRecord;
  readonly events: SessionEvent[];
}

/**
 * The ephemeral {@link SessionService} (spec 03 §4): sessions and their events in process memory,
 * kept as deep-frozen copies, so neither a writer nor a reader can change a stored record. Session
 * ids are unique across apps and users, as in the Postgres store; event ids are unique across sessions.
 *
 * @example
 * const sessions = new InMemorySessionService();
 * const session = await sessions.createSession({ appName: 'helper', userId: 'u1' });
 * await sessions.appendEvent({ appName: 'helper', userId: 'u1', sessionId: session.session_id }, event);
 */
export class InMemorySessionService implements SessionService {
  private readonly clock: Clock;
  private readonly sessions = new Map<string, StoredSession>();
  private readonly eventIds = new Set<string>();

  /** Throws `invalid_runner_options` for unknown keys or a `clock` without `wallNow()`. */
  constructor(options?: InMemorySessionServiceOptions) {
    this.clock = sessionServiceSettings(options, false).clock;
  }

  async createSession(input: { appName: string; userId: string; sessionId?: string; state?: JsonObject }): Promise<SessionRecord> {
    const creation = sessionCreation(input);
    if (this.sessions.has(creation.sessionId)) throw new RunnerError('session_state_conflict');
    const now = recordTimeMs(this.clock);
    const record = sessionRecord({
      session_id: creation.sessionId,
      app_name: creation.appName,
      user_id: creation.userId,
      state: creation.state.value,
      state_version: 0,
      last_seq: 0,
      created_at_ms: now,
      updated_at_ms: now,
    });
    this.sessions.set(creation.sessionId, { record, events: [] });
    return record;
  }

  async getSession(ref: SessionRef): Promise<SessionRecord | undefined> {
    return this.owned(sessionRef(ref))?.record;
  }

  async listSessions(input: { appName: string; userId: string; limit?: number; offset?: number }): Promise<readonly SessionRecord[]> {
    const listing = sessionListing(input);
    const records: SessionRecord[] = [];
    for (const { record } of this.sessions.values()) {
      if (record.app_name === listing.appName && record.user_id === listing.userId) records.push(record);
    }
    records.sort(newestFirst);
    const end = listing.limit === null ? undefined : listing.offset + listing.limit;
    return Object.freeze(records.slice(listing.offset, end));
  }

  async deleteSession(ref: SessionRef): Promise<boolean> {
    const checked = sessionRef(ref);
    const stored = this.owned(checked);
    if (!stored) return false;
    for (const event of stored.events) this.eventIds.delete(event.event_id);
    this.sessions.delete(checked.sessionId);
    return true;
  }

  async appendEvent(ref: SessionRef, event: NewSessionEvent): Promise<SessionEvent> {
    const checked = sessionRef(ref);
    const candidate = checkedEvent(event);
    const stored = this.owned(checked);
    if (!stored) throw new RunnerError('session_not_found');
    if (this.eventIds.has(candidate.event_id)) throw new RunnerError('session_state_conflict');
    const now = recordTimeMs(this.clock);
    const seq = stored.record.last_seq + 1;
    const appended = storedEvent(candidate, checked.sessionId, seq, now);
    stored.events.push(appended);
    this.eventIds.add(candidate.event_id);
    stored.record = sessionRecord({ ...stored.record, last_seq: seq, updated_at_ms: now });
    return appended;
  }

  async listEvents(ref: SessionRef, options?: ListEventsOptions): Promise<readonly SessionEvent[]> {
    const checked = sessionRef(ref);
    const listing = eventListing(options);
    const stored = this.owned(checked);
    if (!stored) throw new RunnerError('session_not_found');
    // seq runs 1, 2, 3, … without gaps, so the event after `afterSeq` sits at index `afterSeq`
    const end = listing.limit === null ? undefined : listing.afterSeq + listing.limit;
    return Object.freeze(stored.events.slice(listing.afterSeq, end));
  }

  async updateState(ref: SessionRef, delta: { readonly [key: string]: JsonValue }, options?: UpdateStateOptions): Promise<SessionRecord> {
    const checked = sessionRef(ref);
    const change = stateDelta(delta);
    const expected = expectedVersion(options);
    const stored = this.owned(checked);
    if (!stored) throw new RunnerError('session_not_found');
    if (expected !== null && expected !== stored.record.state_version) throw new RunnerError('session_state_conflict');
    const merged = new Map<string, JsonValue>(Object.entries(stored.record.state));
    for (const key of change.remove) merged.delete(key);
    for (const [key, value] of Object.entries(change.set.value)) merged.set(key, value);
    stored.record = sessionRecord({
      ...stored.record,
      // fromEntries defines own properties, so a "__proto__" key stays a key
      state: Object.freeze(Object.fromEntries(merged)) as JsonObject,
      state_version: stored.record.state_version + 1,
      updated_at_ms: recordTimeMs(this.clock),
    });
    return stored.record;
  }

  /** The session `ref` addresses, or `undefined` when absent or owned by another app or user. */
  private owned(ref: SessionRef): StoredSession | undefined {
    const stored = this.sessions.get(ref.sessionId);
    return stored && stored.record.app_name === ref.appName && stored.record.user_id === ref.userId ? stored : undefined;
  }
}

/** `updated_at_ms` descending, then `session_id` in code-unit order (as `COLLATE "C"` sorts ASCII). */
function newestFirst(a: SessionRecord, b: SessionRecord): number {
  if (a.updated_at_ms !== b.updated_at_ms) return b.updated_at_ms - a.updated_at_ms;
  return a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0;
}

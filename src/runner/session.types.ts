import type { JsonObject, JsonValue } from './content.types';

/** Addresses one session of one user of one app. */
export interface SessionRef {
  readonly appName: string;
  readonly userId: string;
  readonly sessionId: string;
}

/** A stored session (spec 03 §4): a frozen snake_case record. */
export interface SessionRecord {
  readonly session_id: string;
  readonly app_name: string;
  readonly user_id: string;
  readonly state: JsonObject;
  readonly state_version: number;
  readonly last_seq: number;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** Who wrote an event: the user, an agent (by name), a tool, the system (audit) or the runner (confirmation). */
export type EventAuthor = string;

/** The kinds of session events. */
export type SessionEventKind = 'user_message' | 'model_turn' | 'tool_response' | 'confirmation_requested' | 'final_output' | 'policy_audit';

/** What a writer hands to `appendEvent`; the store assigns `session_id`, `seq` and `created_at_ms`. */
export interface NewSessionEvent {
  /** `evt-` + random id, unique. */
  readonly event_id: string;
  readonly invocation_id: string;
  readonly author: EventAuthor;
  readonly kind: SessionEventKind;
  readonly content: JsonValue;
  readonly actions?: JsonObject;
}

/** A stored, deep-frozen event. */
export interface SessionEvent extends NewSessionEvent {
  readonly session_id: string;
  /** Per-session sequence from 1, gap-free, strictly increasing. */
  readonly seq: number;
  readonly created_at_ms: number;
}

/** Options of `listEvents`. */
export interface ListEventsOptions {
  /** Only events with a greater `seq`. @default 0 */
  readonly afterSeq?: number;
  /** At most this many events. @default all */
  readonly limit?: number;
}

/** Options of `updateState`. */
export interface UpdateStateOptions {
  /** Refuse with `session_state_conflict` unless the session's `state_version` is this. */
  readonly expectedVersion?: number;
}

/**
 * Where sessions and their append-only events live (spec 03 §4). Every failure of the store is a
 * `RunnerError('session_store_failed', {operation})`; bad arguments are `invalid_run_request`.
 */
export interface SessionService {
  /** Creates a session (`sessionId` generated when absent); an existing id gives `session_state_conflict`. */
  createSession(input: { appName: string; userId: string; sessionId?: string; state?: JsonObject }): Promise<SessionRecord>;
  /** The session, or `undefined` when absent or owned by another user. */
  getSession(ref: SessionRef): Promise<SessionRecord | undefined>;
  /** The user's sessions of the app, newest first. */
  listSessions(input: { appName: string; userId: string; limit?: number; offset?: number }): Promise<readonly SessionRecord[]>;
  /** Removes the session and its events; `false` when there was none. */
  deleteSession(ref: SessionRef): Promise<boolean>;
  /** Appends one event, assigning the next `seq` atomically; `session_not_found` when the session is absent. */
  appendEvent(ref: SessionRef, event: NewSessionEvent): Promise<SessionEvent>;
  /** Events in `seq` order. */
  listEvents(ref: SessionRef, options?: ListEventsOptions): Promise<readonly SessionEvent[]>;
  /** Shallow merge of `delta` into the state (`null` deletes a key); increments `state_version`. */
  updateState(ref: SessionRef, delta: { readonly [key: string]: JsonValue }, options?: UpdateStateOptions): Promise<SessionRecord>;
}


import type { Clock } from '../../shared/time/clock';
import type { JsonObject, JsonValue } from '../../runner/content.types';
import type { CheckedEvent } from './session-arguments';
import type { SessionEvent, SessionRecord } from '../../runner/session.types';

/** A frozen {@link SessionRecord} with its keys in the documented order. */
export function sessionRecord(fields: SessionRecord): SessionRecord {
  return Object.freeze({
    session_id: fields.session_id,
    app_name: fields.app_name,
    user_id: fields.user_id,
    state: fields.state,
    state_version: fields.state_version,
    last_seq: fields.last_seq,
    created_at_ms: fields.created_at_ms,
    updated_at_ms: fields.updated_at_ms,
  });
}

/** The fields of a stored event, `content` and `actions` already deep-frozen; `actions` absent when `undefined`. */
export interface EventFields {
  readonly session_id: string;
  readonly seq: number;
  readonly event_id: string;
  readonly invocation_id: string;
  readonly author: string;
  readonly kind: SessionEvent['kind'];
  readonly content: JsonValue;
  readonly actions: JsonObject | undefined;
  readonly created_at_ms: number;
}

/** A frozen {@link SessionEvent}; it has no `actions` key when the event has none. */
export function sessionEvent(fields: EventFields): SessionEvent {
  return Object.freeze({
    session_id: fields.session_id,
    seq: fields.seq,
    event_id: fields.event_id,
    invocation_id: fields.invocation_id,
    author: fields.author,
    kind: fields.kind,
    content: fields.content,
    ...(fields.actions === undefined ? {} : { actions: fields.actions }),
    created_at_ms: fields.created_at_ms,
  });
}

/** The stored event of a checked event, once the store assigned its place and time. */
export function storedEvent(event: CheckedEvent, sessionId: string, seq: number, createdAtMs: number): SessionEvent {
  return sessionEvent({
    session_id: sessionId,
    seq,
    event_id: event.event_id,
    invocation_id: event.invocation_id,
    author: event.author,
    kind: event.kind,
    content: event.content.value,
    actions: event.actions?.value,
    created_at_ms: createdAtMs,
  });
}

/** The store's wall clock as whole milliseconds, as the `bigint` timestamp columns keep it. */
export function recordTimeMs(clock: Clock): number {
  return Math.floor(clock.wallNow());
}

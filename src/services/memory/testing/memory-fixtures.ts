import type { SessionEvent, SessionRecord } from '../../../runner/session.types';
import { randomId } from '../../../shared/ids/random-id';

/** A session record of `appName`/`userId` for tests. */
export function memorySession(appName: string, userId: string, sessionId = randomId('s-')): SessionRecord {
  return Object.freeze({ session_id: sessionId, app_name: appName, user_id: userId, state: {}, state_version: 0, last_seq: 0, created_at_ms: 1, updated_at_ms: 1 });
}

let seq = 0;

/** A stored `user_message` event holding `text` (unless `overrides` say otherwise). */
export function memoryEvent(text: string, overrides: Partial<SessionEvent> = {}): SessionEvent {
  seq += 1;
  return {
    event_id: randomId('evt-'),
    invocation_id: 'inv-1',
    session_id: 's-1',
    seq,
    author: 'user',
    kind: 'user_message',
    content: { role: 'user', parts: [{ text }] },
    created_at_ms: 1_700_000_000_000 + seq,
    ...overrides,
  };
}

/** A `final_output` event of agent `helper` holding `text`. */
export function finalOutput(text: string, overrides: Partial<SessionEvent> = {}): SessionEvent {
  return memoryEvent(text, { author: 'helper', kind: 'final_output', content: { role: 'model', parts: [{ text }] }, ...overrides });
}

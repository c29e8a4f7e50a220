import type { JsonObject, JsonValue } from '../content.types';

/** Session state key of the pending confirmations; hidden from every context. */
export const CONTINUATIONS_KEY = '__agent_runtime_continuations';

/** What a paused call needs to be resumed (spec 03 §7). */
export interface Continuation {
  readonly invocation_id: string;
  readonly call_id: string;
  readonly tool: string;
  readonly args: JsonValue;
  readonly agent: string;
  readonly durable: boolean;
}

/** The state callbacks and tools see: without the reserved key. */
export function visibleState(state: JsonObject): JsonObject {
  if (!(CONTINUATIONS_KEY in state)) return state;
  const { [CONTINUATIONS_KEY]: _hidden, ...visible } = state;
  return Object.freeze(visible);
}

/** The continuations stored in a session state, by call id. */
export function continuationsOf(state: JsonObject): Readonly<Record<string, Continuation>> {
  const stored = state[CONTINUATIONS_KEY];
  return typeof stored === 'object' && stored !== null && !Array.isArray(stored) ? (stored as unknown as Record<string, Continuation>) : {};
}

/** The state delta that stores `all` (an empty map deletes the key). */
export function continuationsDelta(all: Readonly<Record<string, Continuation>>): { [key: string]: JsonValue } {
  return { [CONTINUATIONS_KEY]: Object.keys(all).length === 0 ? null : (all as unknown as JsonValue) };
}

/** The call ids of one invocation still awaiting a decision. */
export function pendingCallIds(state: JsonObject, invocationId: string): string[] {
  return Object.values(continuationsOf(state))
    .filter((continuation) => continuation.invocation_id === invocationId)
    .map((continuation) => continuation.call_id);
}

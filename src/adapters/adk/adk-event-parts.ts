import type { AdkEvent } from './adk.types';

type Part = NonNullable<NonNullable<AdkEvent['content']>['parts']>[number];

const partsOf = (event: AdkEvent): readonly Part[] => (Array.isArray(event.content?.parts) ? event.content.parts : []);

/**
 * Content an agent presents as its answer: a stored (not partial) event not authored by the user,
 * with parts and neither function calls nor function responses (those are a model turn and tool
 * results; an error event has no content).
 */
export function isFinalOutput(event: AdkEvent): boolean {
  if (event.partial === true || event.author === 'user') return false;
  const parts = partsOf(event);
  return parts.length > 0 && parts.every((part) => part.functionCall === undefined && part.functionResponse === undefined);
}

/** The function responses of an event with their part index. */
export function respondedCalls(event: AdkEvent): Array<{ readonly index: number; readonly id: string | undefined; readonly response: unknown }> {
  const found: Array<{ index: number; id: string | undefined; response: unknown }> = [];
  partsOf(event).forEach((part, index) => {
    if (part.functionResponse !== undefined) found.push({ index, id: part.functionResponse.id, response: part.functionResponse.response });
  });
  return found;
}

/**
 * Whether a stored response is the value `afterToolCallback` measured: the same object, or ADK's
 * wrapping of a non-object result (`{result}`, `{results}` for an array).
 */
export function sameAsChecked(response: unknown, measured: unknown): boolean {
  if (response === measured) return true;
  if (typeof response !== 'object' || response === null) return false;
  const keys = Object.keys(response);
  if (keys.length !== 1) return false;
  const wrapped = response as Record<string, unknown>;
  return (keys[0] === 'result' && wrapped.result === measured) || (keys[0] === 'results' && wrapped.results === measured);
}

/** A copy of `event` whose function responses at the given indices are replaced. */
export function withResponses(event: AdkEvent, replacements: ReadonlyMap<number, Record<string, unknown>>): AdkEvent {
  const parts = partsOf(event).map((part, index) => {
    const response = replacements.get(index);
    return response === undefined || part.functionResponse === undefined ? part : { ...part, functionResponse: { ...part.functionResponse, response } };
  });
  return { ...event, content: { ...event.content, parts } };
}

import type { Content, JsonValue } from '../content.types';
import { contentText } from './message';
import type { HistoryEntry, ToolCall } from '../models/model.types';
import type { SessionEvent } from '../session.types';

/**
 * The history an agent's model sees (spec 03 §3): user messages, that agent's model turns and final
 * outputs, and the tool responses to its calls, in `seq` order. Audit and confirmation events, and
 * other agents' turns, are never shown.
 */
export function historyOf(events: readonly SessionEvent[], agentName: string): HistoryEntry[] {
  const history: HistoryEntry[] = [];
  const ownCalls = new Set<string>();
  for (const event of events) {
    const content = event.content as Record<string, JsonValue>;
    if (event.kind === 'user_message') history.push({ role: 'user', content: event.content as unknown as Content });
    else if (event.kind === 'model_turn' && event.author === agentName) {
      const toolCalls = content.tool_calls as unknown as readonly ToolCall[];
      for (const call of toolCalls) ownCalls.add(call.id);
      history.push(typeof content.text === 'string' ? { role: 'model', text: content.text, toolCalls } : { role: 'model', toolCalls });
    } else if (event.kind === 'tool_response' && ownCalls.has(content.call_id as string)) {
      history.push({ role: 'tool', callId: content.call_id as string, name: content.tool as string, response: content.response });
    } else if (event.kind === 'final_output' && event.author === agentName) {
      history.push({ role: 'model', text: contentText(event.content as unknown as Content) });
    }
  }
  return history;
}

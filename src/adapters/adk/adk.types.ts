import type { BaseAgent, BasePlugin, BaseSessionService, BaseTool, Context, Event, InvocationContext, LlmRequest, LlmResponse, Session } from '@google/adk' with { 'resolution-mode': 'import' };

/**
 * An ADK event (`@google/adk` `Event`), as the facade yields it.
 *
 * @example
 * const events: readonly AdkEvent[] = await facade.run(request);
 * const audits = events.filter((event) => event.author === 'system');
 */
export type AdkEvent = Event;

/**
 * An ADK message (`@google/genai` `Content`, as ADK events carry it).
 *
 * @example
 * const newMessage: AdkContent = { role: 'user', parts: [{ text: 'Rain in Oslo?' }] };
 */
export type AdkContent = NonNullable<Event['content']>;

export type { BaseAgent, BasePlugin, BaseSessionService, BaseTool, Context, InvocationContext, LlmRequest, LlmResponse, Session };

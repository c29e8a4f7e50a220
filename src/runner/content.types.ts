import type { JsonValue } from '../json/json.types';

export type { JsonObject, JsonValue } from '../json/json.types';

/** One part of a message: text, or structured data. */
export type Part = { readonly text: string } | { readonly data: JsonValue };

/** A user message or a final output (spec 03 §2). */
export interface Content {
  readonly role: 'user' | 'model';
  readonly parts: readonly Part[];
}

/** What a caller may send as a message: Content, or a string meaning `{role: 'user', parts: [{text}]}`. */
export type Message = string | Content;

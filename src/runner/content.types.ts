/** A JSON value: what may reach a tool, an event or a model. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { readonly [key: string]: JsonValue };

/** One part of a message: text, or structured data. */
export type Part = { readonly text: string } | { readonly data: JsonValue };

/** A user message or a final output (spec 03 §2). */
export interface Content {
  readonly role: 'user' | 'model';
  readonly parts: readonly Part[];
}

/** What a caller may send as a message: Content, or a string meaning `{role: 'user', parts: [{text}]}`. */
export type Message = string | Content;

import { frozenJsonCopy } from '../../json/json-copy';
import { storableJsonText } from '../../json/storable-json';
import { isPlainObject } from '../../shared/options/plain-object';
import type { Content } from '../content.types';

/**
 * A deep-frozen copy of `value` when it is a Content (`{role, parts}` with `{text}` or `{data}`
 * parts, JSON-safe), else `null`. `role` must be `expectedRole` when given.
 */
export function contentOrNull(value: unknown, expectedRole?: 'user' | 'model'): Content | null {
  if (!isPlainObject(value) || (value.role !== 'user' && value.role !== 'model')) return null;
  if (expectedRole !== undefined && value.role !== expectedRole) return null;
  if (!Array.isArray(value.parts) || Object.keys(value).length !== 2) return null;
  for (const part of value.parts) {
    if (!isPlainObject(part)) return null;
    const keys = Object.keys(part);
    if (keys.length !== 1 || !(keys[0] === 'data' || (keys[0] === 'text' && typeof part.text === 'string'))) return null;
  }
  try {
    return frozenJsonCopy(value as unknown as Content);
  } catch {
    return null;
  }
}

/** A user message as Content: a string becomes `{role: 'user', parts: [{text}]}`. `null` when malformed. */
export function userContent(message: unknown): Content | null {
  if (typeof message === 'string') return textContent('user', message);
  return contentOrNull(message, 'user');
}

/**
 * A user message the session stores will keep: a {@link userContent}, without U+0000 or a lone
 * surrogate in any string ({@link storableJsonText}, the stores' own rule). A run started with any
 * other message would be refused by the session store after admission.
 */
export function isStorableMessage(message: unknown): boolean {
  const content = userContent(message);
  return content !== null && storableJsonText(content) !== undefined;
}

/** Content holding one text part. */
export function textContent(role: 'user' | 'model', text: string): Content {
  return Object.freeze({ role, parts: Object.freeze([Object.freeze({ text })]) });
}

/** The text parts of a Content joined, as a model sees a final output. */
export function contentText(content: Content): string {
  return content.parts.map((part) => ('text' in part ? part.text : '')).join('');
}

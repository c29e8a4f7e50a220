import { types } from 'node:util';
import { childFieldName, WHOLE_INPUT_FIELD } from './trace-event-schemas';
import { TraceStoreError } from '../trace-store.errors';

/** The bounds of the input guard (spec 06 §4 step 2). */
export const TRACE_INPUT_LIMITS = Object.freeze({
  /** Deepest nesting of objects and arrays: `{}` is 1, `{"a":[1]}` is 2. */
  maxDepth: 32,
  /** Values in the whole input, the input itself included. */
  maxNodes: 10_000,
  /** Members of one object or elements of one array. */
  maxEntries: 1024,
  /** UTF-8 bytes of all strings, keys included, per byte of `maxEventBytes`. */
  stringBytesPerEventByte: 4,
});

/** One object or array waiting to be walked, with the nesting depth it sits at and the name errors give it. */
interface PendingContainer {
  readonly value: object;
  readonly depth: number;
  readonly field: string;
}

/**
 * Checks that `input` is plain JSON within the bounds of {@link TRACE_INPUT_LIMITS}, before anything
 * projects or copies it. The walk is iterative and reads own enumerable data properties only: no
 * getter, `toJSON`, Proxy trap or other user code ever runs. Symbol keys and non-enumerable
 * properties are not part of the event (as in JSON) and are not looked at.
 *
 * Throws `trace_event_input_too_large` `{limit}` (the bound that was passed; a cycle passes the depth
 * bound) or `invalid_trace_event` `{field}` for anything but plain objects (prototype
 * `Object.prototype` or `null`), arrays, well-formed strings, finite numbers, booleans and `null`:
 * an accessor, an `undefined` member, an array hole, a Proxy, a class instance. `field` is a path of
 * allow-listed names, never a key of the input.
 */
export function guardTraceInput(input: unknown, maxEventBytes: number): void {
  try {
    walk(input, maxEventBytes);
  } catch (error) {
    if (TraceStoreError.isTraceStoreError(error)) throw error;
    // only an exotic object the checks below do not foresee can throw; it is not plain JSON either
    throw invalidEvent(WHOLE_INPUT_FIELD);
  }
}

function walk(input: unknown, maxEventBytes: number): void {
  const maxStringBytes = TRACE_INPUT_LIMITS.stringBytesPerEventByte * maxEventBytes;
  const pending: PendingContainer[] = [];
  let nodes = 0;
  let stringBytes = 0;

  const countString = (text: string, field: string): void => {
    // the length is a lower bound of the bytes: a huge string is refused before it is scanned
    if (stringBytes + text.length > maxStringBytes) throw inputTooLarge(maxStringBytes);
    stringBytes += Buffer.byteLength(text, 'utf8');
    if (stringBytes > maxStringBytes) throw inputTooLarge(maxStringBytes);
    if (!text.isWellFormed()) throw invalidEvent(field);
  };

  const visit = (value: unknown, depth: number, field: string): void => {
    if (++nodes > TRACE_INPUT_LIMITS.maxNodes) throw inputTooLarge(TRACE_INPUT_LIMITS.maxNodes);
    switch (typeof value) {
      case 'string':
        return countString(value, field);
      case 'number':
        if (!Number.isFinite(value)) throw invalidEvent(field);
        return;
      case 'boolean':
        return;
      case 'object':
        if (value === null) return;
        if (!isJsonContainer(value)) throw invalidEvent(field);
        if (depth + 1 > TRACE_INPUT_LIMITS.maxDepth) throw inputTooLarge(TRACE_INPUT_LIMITS.maxDepth);
        pending.push({ value, depth: depth + 1, field });
        return;
      default:
        throw invalidEvent(field);
    }
  };

  visit(input, 0, WHOLE_INPUT_FIELD);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth, field } = next;
    if (Array.isArray(value)) {
      if (value.length > TRACE_INPUT_LIMITS.maxEntries) throw inputTooLarge(TRACE_INPUT_LIMITS.maxEntries);
      for (let index = 0; index < value.length; index++) {
        const descriptor = Object.getOwnPropertyDescriptor(value, index);
        if (descriptor === undefined || !('value' in descriptor)) throw invalidEvent(field);
        visit(descriptor.value, depth, field);
      }
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > TRACE_INPUT_LIMITS.maxEntries) throw inputTooLarge(TRACE_INPUT_LIMITS.maxEntries);
    for (const key of keys) {
      const member = childFieldName(field, key);
      countString(key, member);
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (descriptor === undefined || !('value' in descriptor)) throw invalidEvent(member);
      visit(descriptor.value, depth, member);
    }
  }
}

/**
 * The own enumerable members of an object that {@link guardTraceInput} accepted, in enumeration
 * order: every one is a data property, so reading it runs no user code.
 */
export function ownEntries(value: object): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  for (const key of Object.keys(value)) entries.set(key, (Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor).value);
  return entries;
}

/** A plain object or a genuine array; `isProxy` is asked first because it runs no trap. */
function isJsonContainer(value: object): boolean {
  if (types.isProxy(value) || types.isModuleNamespaceObject(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return Array.isArray(value) ? prototype === Array.prototype : prototype === Object.prototype || prototype === null;
}

const inputTooLarge = (limit: number): TraceStoreError => new TraceStoreError('trace_event_input_too_large', { limit });
const invalidEvent = (field: string): TraceStoreError => new TraceStoreError('invalid_trace_event', { field });

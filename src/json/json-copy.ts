import { canonicalJson } from './canonical-json';

/**
 * Freezes `value` and everything reachable through its own data properties, iteratively (a
 * 1,000,000-deep array is fine) and without calling a getter. Returns `value`.
 *
 * @example
 * const spec = deepFreeze({ columns: [{ name: 'id' }] });
 * Object.isFrozen(spec.columns[0]); // true
 */
export function deepFreeze<T>(value: T): T {
  const seen = new WeakSet<object>();
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if ((typeof current !== 'object' && typeof current !== 'function') || current === null || seen.has(current)) continue;
    seen.add(current);
    for (const key of Reflect.ownKeys(current)) {
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (descriptor && 'value' in descriptor) pending.push(descriptor.value);
    }
    Object.freeze(current);
  }
  return value;
}

/**
 * A deep-frozen copy of the JSON text `text`, as `JSON.parse` builds it (`"__proto__"` stays an
 * ordinary own key). Throws a `SyntaxError` for text that is not JSON.
 */
export function frozenJsonParse(text: string): unknown {
  return deepFreeze(JSON.parse(text) as unknown);
}

/**
 * A deep-frozen copy of the JSON value `value`, holding no reference into it: what a store keeps
 * and hands out so no caller can change a record afterwards. Throws `JsonError` as
 * {@link canonicalJson} does for anything JSON cannot hold faithfully (`-0` becomes `0`).
 *
 * @example
 * const stored = frozenJsonCopy({ role: 'user', parts: [{ text: 'hi' }] });
 * Object.isFrozen(stored.parts); // true
 */
export function frozenJsonCopy<T>(value: T): T {
  return frozenJsonParse(canonicalJson(value)) as T;
}

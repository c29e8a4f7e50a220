/** Bounds of {@link exceededJsonShape}. */
export interface JsonShapeLimits {
  /** Deepest nesting of objects and arrays: a scalar is 0, `{}` is 1, `{"a":[1]}` is 2. */
  readonly maxDepth: number;
  /** Most values, the root included: `{"a":[1]}` has 3. */
  readonly maxNodes: number;
}

/**
 * The first bound of `limits` that `value` passes, `'depth'` or `'nodes'`, or `null` within both.
 * The walk is iterative and stops at the first excess, so its work follows the limits rather than
 * the value; a cycle passes the depth bound. It reads own enumerable data properties of objects and
 * the elements of arrays (never a getter, which counts as one leaf value), and judges shape only:
 * whether the value is JSON at all is for `measure` or `canonicalJson` to say.
 *
 * @example
 * exceededJsonShape({ a: [1] }, { maxDepth: 1, maxNodes: 10 }); // 'depth'
 */
export function exceededJsonShape(value: unknown, limits: JsonShapeLimits): 'depth' | 'nodes' | null {
  const pending: Array<{ readonly value: object; readonly depth: number }> = [];
  let nodes = 0;
  const visit = (member: unknown, depth: number): 'depth' | 'nodes' | null => {
    if (++nodes > limits.maxNodes) return 'nodes';
    if (typeof member !== 'object' || member === null) return null;
    if (depth + 1 > limits.maxDepth) return 'depth';
    pending.push({ value: member, depth: depth + 1 });
    return null;
  };
  const first = visit(value, 0);
  if (first !== null) return first;
  while (pending.length > 0) {
    const { value: container, depth } = pending.pop() as { value: object; depth: number };
    const members = Array.isArray(container) ? container.length : 0;
    // counted before the members are read, so a huge container is refused without being walked
    if (nodes + members > limits.maxNodes) return 'nodes';
    const keys = Array.isArray(container) ? null : Object.keys(container);
    const count = keys === null ? members : keys.length;
    for (let i = 0; i < count; i++) {
      const descriptor = Object.getOwnPropertyDescriptor(container, keys === null ? i : keys[i]);
      const found = visit(descriptor !== undefined && 'value' in descriptor ? descriptor.value : null, depth);
      if (found !== null) return found;
    }
  }
  return null;
}

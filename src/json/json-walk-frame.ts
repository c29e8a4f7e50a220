import type { Shape } from './json-key-shapes';

/** Marks a member held by an accessor: collected unread, reported in canonical order. */
export const ACCESSOR: unique symbol = Symbol('accessor');

/** What a frame holds before its first use. */
const NO_CONTAINER: object = Object.freeze({});

/**
 * One container on the stack. Frames are reused as the stack shrinks and grows again, so a walk
 * allocates one per nesting level rather than one per container.
 */
export class Frame {
  container: object = NO_CONTAINER;
  index = 0;
  length = 0;
  /** Keys of the emitted members of a plain object, in enumeration order; `null` for an array. */
  keys: string[] | null = null;
  /** Their values (or {@link ACCESSOR}), aligned with `keys`. */
  values: unknown[] | null = null;
  /** `keys` positions in sorted order; `null` when `keys` are sorted already. */
  order: readonly number[] | null = null;
  /** The shape whose keys were counted in full when the object was collected, if any. */
  shape: Shape | null = null;

  /** Position in `keys`/`values` of the `index`-th member in canonical order. */
  at(index: number): number {
    return this.order === null ? index : this.order[index];
  }
}

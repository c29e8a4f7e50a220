/** Below this many slots a half-dead index is not worth compacting. */
const MIN_COMPACT_SLOTS = 32;

/**
 * An ordered index of items by strictly increasing cursor: a sorted array with a moving head.
 * Removing the oldest item is O(1); removing any other is O(log n) (binary search, the slot is
 * left dead); the array is compacted once more than half of it is dead, so every operation is
 * amortised O(1) or O(log n) and a page after a cursor costs O(log n + page) (spec 06 §5).
 *
 * Hand-written rather than a B-tree package: items only ever enter at the newest end, so a sorted
 * array is both smaller and faster than a general ordered map.
 */
export class CursorIndex<T> {
  #cursors: number[] = [];
  #items: (T | undefined)[] = [];
  #head = 0;
  #live = 0;
  #newest = -Infinity;

  /** Live items. */
  get size(): number {
    return this.#live;
  }

  /** Cursor of the oldest live item; `undefined` when empty. */
  get oldestCursor(): number | undefined {
    return this.#live === 0 ? undefined : this.#cursors[this.#head];
  }

  /** The oldest live item; `undefined` when empty. */
  oldest(): T | undefined {
    return this.#live === 0 ? undefined : this.#items[this.#head];
  }

  /** Adds `item` (never `undefined`) at the newest end; `cursor` must exceed every cursor added before. */
  push(cursor: number, item: T): void {
    if (!(cursor > this.#newest)) throw new RangeError('CursorIndex.push needs a cursor above the newest one');
    this.#newest = cursor;
    this.#cursors.push(cursor);
    this.#items.push(item);
    this.#live++;
  }

  /** Removes the item at `cursor`; false when there is none. */
  delete(cursor: number): boolean {
    const at = this.#head < this.#cursors.length && this.#cursors[this.#head] === cursor ? this.#head : this.#find(cursor);
    if (at < 0 || this.#items[at] === undefined) return false;
    this.#items[at] = undefined;
    this.#live--;
    if (this.#live === 0) {
      this.#cursors = [];
      this.#items = [];
      this.#head = 0;
      return true;
    }
    while (this.#items[this.#head] === undefined) this.#head++;
    if (this.#cursors.length >= MIN_COMPACT_SLOTS && this.#live * 2 < this.#cursors.length) this.#compact();
    return true;
  }

  /** Live items with a cursor above `cursor` (all of them when `undefined`), oldest first. */
  *after(cursor: number | undefined): IterableIterator<T> {
    const cursors = this.#cursors;
    const items = this.#items;
    for (let i = cursor === undefined ? this.#head : this.#firstAbove(cursor); i < cursors.length; i++) {
      const item = items[i];
      if (item !== undefined) yield item;
    }
  }

  /** Position of `cursor` among the slots from the head, or -1. */
  #find(cursor: number): number {
    const i = this.#firstAbove(cursor - 1);
    return i < this.#cursors.length && this.#cursors[i] === cursor ? i : -1;
  }

  /** First slot from the head whose cursor is above `cursor` (the length when none is). */
  #firstAbove(cursor: number): number {
    let lo = this.#head;
    let hi = this.#cursors.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#cursors[mid] > cursor) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  #compact(): void {
    const cursors: number[] = [];
    const items: T[] = [];
    for (let i = this.#head; i < this.#cursors.length; i++) {
      const item = this.#items[i];
      if (item === undefined) continue;
      cursors.push(this.#cursors[i]);
      items.push(item);
    }
    this.#cursors = cursors;
    this.#items = items;
    this.#head = 0;
  }
}

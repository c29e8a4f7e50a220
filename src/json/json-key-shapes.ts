import { jsonStringBytes } from './json-text-size';

/**
 * Positions of `keys` in UTF-16 code-unit order (keys are distinct); `null` when they already are in
 * that order. Insertion sort for a few keys, the built-in sort otherwise.
 */
export function sortedOrder(keys: readonly string[]): number[] | null {
  const n = keys.length;
  let i = 1;
  while (i < n && keys[i - 1] < keys[i]) i++;
  if (i >= n) return null;
  const order: number[] = [];
  for (let k = 0; k < n; k++) order.push(k);
  if (n > INSERTION_SORT_MAX) return order.sort((a, b) => (keys[a] < keys[b] ? -1 : 1));
  for (; i < n; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[order[j]] > key) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = i;
  }
  return order;
}

const INSERTION_SORT_MAX = 24;

/** Objects with at most this many members share a {@link Shape} with others that have the same keys. */
export const MAX_SHAPE_KEYS = 64;
/** Shapes kept per first key in one walk; beyond it the oldest is forgotten. */
const MAX_SHAPES_PER_FIRST_KEY = 4;

/**
 * The sorted order and the exact size of one list of keys, worked out once per walk for every
 * object whose emitted members have exactly these keys in this enumeration order (objects parsed
 * from the same JSON shape), so their keys are neither scanned nor sorted again.
 */
export class Shape {
  /** `"key":` of each key in sorted order, for canonicalJson; built on first use. */
  texts: string[] | null = null;

  constructor(
    readonly keys: readonly string[],
    readonly order: readonly number[] | null,
    /**
     * What escapes and multi-byte characters add to the keys in JSON string form, beyond the
     * `len(key) + 2` counted for each when it was collected (with its colon, its value's first byte
     * and a comma); -1 when a key holds a lone surrogate (then each key is scanned as it is written,
     * so the error is reported in canonical order).
     */
    readonly keyBytes: number,
    public next: Shape | null,
  ) {}

  matches(keys: readonly string[]): boolean {
    const own = this.keys;
    if (own.length !== keys.length) return false;
    for (let i = 0; i < own.length; i++) if (own[i] !== keys[i]) return false;
    return true;
  }

  /** `"key":` of the `index`-th member in sorted order. */
  text(index: number): string {
    let texts = this.texts;
    if (texts === null) {
      texts = [];
      for (let i = 0; i < this.keys.length; i++) texts.push(`${JSON.stringify(this.keys[this.order === null ? i : this.order[i]])}:`);
      this.texts = texts;
    }
    return texts[index];
  }
}

/** The shapes seen in one walk, by their first key; a few per first key, the oldest forgotten. */
export class KeyShapes {
  private readonly shapes = new Map<string, Shape>();

  /** The shape of `keys` (2 ≤ length ≤ {@link MAX_SHAPE_KEYS}), found or worked out now; the work is counted on `meter`. */
  of(keys: string[], meter: { steps: number } | null): Shape {
    const shapes = this.shapes;
    const first = shapes.get(keys[0]) ?? null;
    for (let known = first; known !== null; known = known.next) if (known.matches(keys)) return known;
    let keyBytes = 0;
    for (let i = 0; i < keys.length; i++) {
      if (meter) meter.steps += keys[i].length;
      const bytes = jsonStringBytes(keys[i]);
      if (bytes < 0) {
        keyBytes = -1;
        break;
      }
      keyBytes += bytes - keys[i].length - 2;
    }
    const shape = new Shape(keys.slice(), sortedOrder(keys), keyBytes, first);
    shapes.set(keys[0], shape);
    let last = shape;
    for (let kept = 1; kept < MAX_SHAPES_PER_FIRST_KEY && last.next !== null; kept++) last = last.next;
    last.next = null;
    return shape;
  }
}

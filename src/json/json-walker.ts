import { types } from 'node:util';
import { KeyShapes, MAX_SHAPE_KEYS, sortedOrder, type Shape } from './json-key-shapes';
import { jsonStringBytes, numberLength } from './json-text-size';
import { ACCESSOR, Frame } from './json-walk-frame';
import { JsonError } from './json.errors';

/** `details.kind` of `unsupported_json_term` (spec 02 §2.1). */
export type UnsupportedJsonKind =
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'non_finite_number'
  | 'non_plain_object'
  | 'accessor'
  | 'cycle';

/** Counts the walker's own steps (values, keys enumerated, code units scanned) so tests can bound its work. */
export interface WorkMeter {
  steps: number;
}

/** What a walk found: `bytes` is exact when not exceeded, else a lower bound above the limit. */
export interface WalkResult {
  readonly exceeded: boolean;
  readonly bytes: number;
}

/** Ancestors this close to the top of the stack are compared one by one (cheaper than hashing). */
const NEAR = 32;
/** Deeper ancestors are remembered in a set at every this many levels. */
const SAMPLE_EVERY = 16;
const isSampled = (depth: number): boolean => depth >= NEAR && depth % SAMPLE_EVERY === 0;

/**
 * The one walk behind `canonicalJson` and `measure` (spec 02 §2.1–2.2): iterative, with an explicit
 * stack and ancestor tracking, so nesting depth is bounded by memory, not by the call stack.
 *
 * `total` is always a lower bound of the canonical size: exact bytes of what was written plus a
 * lower bound for each pending value (1 byte; `len + 2` for a string; `2n + 1` for an array of n;
 * `2 + Σ(len(key) + 4) + commas` for an object). Every refinement only raises it, so the walk can
 * stop the moment it passes the limit, having done work proportional to the limit.
 */
class JsonWalker {
  private total = 0;
  /** Frames `0 … depth - 1` are the containers being walked; later ones wait for reuse. */
  private readonly frames: Frame[] = [];
  private depth = 0;
  /** Containers on the stack at depths that are multiples of {@link SAMPLE_EVERY}, beyond {@link NEAR}. */
  private readonly sampledAncestors = new Set<object>();
  /** Shapes seen in this walk, by their first key. */
  private shapes: KeyShapes | null = null;

  constructor(
    private readonly limit: number,
    private readonly out: string[] | null,
    private readonly meter: WorkMeter | null,
  ) {}

  /** Walks `value`; false when the limit was passed. */
  run(value: unknown): boolean {
    if (!this.visit(value, 0)) return false;
    const frames = this.frames;
    while (this.depth > 0) {
      const frame = frames[this.depth - 1];
      const index = frame.index;
      const keys = frame.keys;
      if (index === frame.length) {
        this.out?.push(keys === null ? ']' : '}');
        this.depth--;
        if (isSampled(this.depth)) this.sampledAncestors.delete(frame.container);
        continue;
      }
      frame.index = index + 1;
      if (index > 0) this.out?.push(',');
      if (keys === null) {
        const array = frame.container as unknown[];
        // an own element only: a hole is `null` even when Array.prototype has been given that index
        const element = Object.hasOwn(array, index) ? array[index] : undefined;
        if (!this.visit(element === undefined ? null : element, 1)) return false;
      } else {
        const at = frame.at(index);
        if (frame.shape !== null) this.out?.push(frame.shape.text(index));
        else if (!this.key(keys[at])) return false;
        const member = (frame.values as unknown[])[at];
        if (member === ACCESSOR) throw this.unsupported('accessor');
        if (!this.visit(member, 1)) return false;
      }
    }
    return true;
  }

  get bytes(): number {
    return this.total;
  }

  /** Replaces the `reserved` lower bound of a pending value by what `value` is known to need. */
  private visit(value: unknown, reserved: number): boolean {
    if (this.meter) this.meter.steps++;
    switch (typeof value) {
      case 'string':
        return this.string(value, reserved);
      case 'number':
        return this.number(value, reserved);
      case 'boolean':
        return this.literal(value ? 'true' : 'false', reserved);
      case 'object':
        return value === null ? this.literal('null', reserved) : this.container(value, reserved);
      case 'undefined':
        throw this.unsupported('undefined');
      default:
        throw this.unsupported(typeof value as 'function' | 'symbol' | 'bigint');
    }
  }

  private grow(bytes: number): boolean {
    this.total += bytes;
    return this.total <= this.limit;
  }

  private literal(text: string, reserved: number): boolean {
    this.out?.push(text);
    return this.grow(text.length - reserved);
  }

  private number(n: number, reserved: number): boolean {
    if (this.out) {
      if (!Number.isFinite(n)) throw this.unsupported('non_finite_number');
      return this.literal(String(n), reserved);
    }
    const length = numberLength(n);
    if (length < 0) throw this.unsupported('non_finite_number');
    return this.grow(length - reserved);
  }

  private string(s: string, reserved: number): boolean {
    if (!this.grow(s.length + 2 - reserved)) return false;
    if (this.out) {
      if (!s.isWellFormed()) throw this.invalidUtf8(true);
      this.out.push(JSON.stringify(s));
      return true;
    }
    if (this.meter) this.meter.steps += s.length;
    const bytes = jsonStringBytes(s);
    if (bytes < 0) throw this.invalidUtf8(true);
    return this.grow(bytes - s.length - 2);
  }

  /** Writes a member's key and colon; the key's `len + 3` bytes were reserved when it was collected. */
  private key(key: string): boolean {
    if (this.out) {
      if (!key.isWellFormed()) throw this.invalidUtf8(false);
      this.out.push(JSON.stringify(key), ':');
      return true;
    }
    if (this.meter) this.meter.steps += key.length;
    const bytes = jsonStringBytes(key);
    if (bytes < 0) throw this.invalidUtf8(false);
    return this.grow(bytes - key.length - 2);
  }

  private container(value: object, reserved: number): boolean {
    // isProxy runs no trap; everything after it may safely touch the object
    if (types.isProxy(value)) throw this.unsupported('non_plain_object');
    const proto: unknown = Object.getPrototypeOf(value);
    const isArray = Array.isArray(value);
    if (isArray ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) {
      throw this.unsupported('non_plain_object');
    }
    if (this.isAncestor(value)) throw this.cycle();
    if (isArray) {
      const length = (value as unknown[]).length;
      if (!this.grow((length === 0 ? 2 : 2 * length + 1) - reserved)) return false;
      this.out?.push('[');
      const frame = this.push(value, length);
      frame.keys = null;
      frame.values = null;
      frame.order = null;
      frame.shape = null;
      return true;
    }
    return this.object(value, reserved);
  }

  /**
   * Collects the members to write and pushes the object's frame; false as soon as their lower
   * bound passes the limit. Accessors are kept as a marker and reported in sorted order, unread.
   * (`Object.keys`, like `for…in`, enumerates every key of the object first: V8 has no lazy key
   * iteration, so a very wide object costs O(members); see bench/RESULTS-policy.md.)
   */
  private object(object: object, reserved: number): boolean {
    if (!this.grow(2 - reserved)) return false;
    const keys = Object.keys(object);
    const values: unknown[] = [];
    const enumerated = keys.length;
    let count = 0;
    for (let i = 0; i < enumerated; i++) {
      if (this.meter) this.meter.steps++;
      const key = keys[i];
      const descriptor = Object.getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      const value = 'value' in descriptor ? descriptor.value : ACCESSOR;
      if (value === undefined) continue;
      if (!this.grow(key.length + (count === 0 ? 4 : 5))) return false;
      keys[count++] = key;
      values.push(value);
    }
    if (count < enumerated) keys.length = count;
    this.out?.push('{');
    let shape: Shape | null = null;
    let order: readonly number[] | null;
    if (count < 2) order = null;
    else if (count > MAX_SHAPE_KEYS) order = sortedOrder(keys);
    else {
      shape = (this.shapes ??= new KeyShapes()).of(keys, this.meter);
      order = shape.order;
      if (shape.keyBytes < 0) shape = null;
      else if (!this.grow(shape.keyBytes)) return false;
    }
    const frame = this.push(object, count);
    frame.keys = keys;
    frame.values = values;
    frame.order = order;
    frame.shape = shape;
    return true;
  }

  /** The next frame, reused when a container at this depth was walked before. */
  private push(container: object, length: number): Frame {
    if (isSampled(this.depth)) this.sampledAncestors.add(container);
    let frame = this.frames[this.depth];
    if (frame === undefined) {
      frame = new Frame();
      this.frames.push(frame);
    }
    this.depth++;
    frame.container = container;
    frame.index = 0;
    frame.length = length;
    return frame;
  }

  /**
   * True when `value` repeats a container on the stack. The nearest {@link NEAR} frames are scanned
   * one by one; farther ones are only found when sampled. A cycle longer than `NEAR` repeats forever,
   * so a sampled container of it repeats at most one period plus `SAMPLE_EVERY` levels after its
   * first repetition, and {@link cycle} then reports that first repetition. Hashing every level
   * would cost a set insertion per container, which dominates on deep values.
   */
  private isAncestor(value: object): boolean {
    const frames = this.frames;
    const depth = this.depth;
    const nearest = Math.max(0, depth - NEAR);
    for (let i = depth - 1; i >= nearest; i--) if (frames[i].container === value) return true;
    return depth > NEAR && this.sampledAncestors.has(value);
  }

  /** `cycle` at the shallowest container on the stack that repeats one of its ancestors. */
  private cycle(): JsonError {
    const seen = new Set<object>();
    let depth = 0;
    while (depth < this.depth && !seen.has(this.frames[depth].container)) seen.add(this.frames[depth++].container);
    // the repeated container's own frame and everything below it leave the path
    this.depth = depth;
    return this.unsupported('cycle');
  }

  /** Keys and indices from the root to the value being visited (or to the object whose key is bad). */
  private path(throughCurrentKey: boolean): string[] {
    const frames = throughCurrentKey ? this.depth : this.depth - 1;
    const path: string[] = [];
    for (let i = 0; i < frames; i++) {
      const frame = this.frames[i];
      const index = frame.index - 1;
      path.push(frame.keys === null ? String(index) : frame.keys[frame.at(index)]);
    }
    return path;
  }

  private unsupported(kind: UnsupportedJsonKind): JsonError {
    return new JsonError('unsupported_json_term', { path: this.path(true), kind });
  }

  private invalidUtf8(throughCurrentKey: boolean): JsonError {
    return new JsonError('invalid_utf8', { path: this.path(throughCurrentKey) });
  }
}

/**
 * Walks `value` as canonical JSON, appending its text to `out` when given, and stops once the byte
 * count passes `limit`. Throws `JsonError` for the first unsupported value in canonical order.
 */
export function walkJson(value: unknown, limit: number, out: string[] | null, meter: WorkMeter | null): WalkResult {
  const walker = new JsonWalker(limit, out, meter);
  const within = walker.run(value);
  return { exceeded: !within, bytes: walker.bytes };
}

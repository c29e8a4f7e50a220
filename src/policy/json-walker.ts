import { types } from 'node:util';
import { RuntimePolicyError } from './runtime-policy.errors';

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

const ACCESSOR: unique symbol = Symbol('accessor');

interface Member {
  readonly key: string;
  readonly value: unknown;
}

class Frame {
  index = 0;
  constructor(
    readonly container: object,
    readonly length: number,
    /** Sorted members of a plain object; `null` for an array. */
    readonly members: Member[] | null,
  ) {}
}

/** UTF-8 bytes of each ASCII code unit in `JSON.stringify` string form. */
const ASCII_JSON_BYTES = new Uint8Array(128).map((_, c) => {
  if (c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x22 || c === 0x5c) return 2;
  return c < 0x20 ? 6 : 1;
});

/** UTF-8 bytes of `JSON.stringify(s)`, quotes included; -1 when `s` holds a lone surrogate. */
export function jsonStringBytes(s: string): number {
  let bytes = 2;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += ASCII_JSON_BYTES[c];
    else if (c < 0x800) bytes += 2;
    else if (c < 0xd800 || c > 0xdfff) bytes += 3;
    else if (c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else return -1;
  }
  return bytes;
}

/** Ancestors this close to the top of the stack are compared one by one (cheaper than hashing). */
const NEAR = 32;
/** Deeper ancestors are remembered in a set at every this many levels. */
const SAMPLE_EVERY = 16;
const isSampled = (depth: number): boolean => depth >= NEAR && depth % SAMPLE_EVERY === 0;

const byKey = (a: Member, b: Member): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

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
  private readonly stack: Frame[] = [];
  /** Containers on the stack at depths that are multiples of {@link SAMPLE_EVERY}, beyond {@link NEAR}. */
  private readonly sampledAncestors = new Set<object>();

  constructor(
    private readonly limit: number,
    private readonly out: string[] | null,
    private readonly meter: WorkMeter | null,
  ) {}

  /** Walks `value`; false when the limit was passed. */
  run(value: unknown): boolean {
    if (!this.visit(value, 0)) return false;
    const stack = this.stack;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.index === frame.length) {
        this.out?.push(frame.members === null ? ']' : '}');
        stack.pop();
        if (isSampled(stack.length)) this.sampledAncestors.delete(frame.container);
        continue;
      }
      const index = frame.index++;
      if (index > 0) this.out?.push(',');
      if (frame.members === null) {
        const array = frame.container as unknown[];
        // an own element only: a hole is `null` even when Array.prototype has been given that index
        const element = Object.hasOwn(array, index) ? array[index] : undefined;
        if (!this.visit(element === undefined ? null : element, 1)) return false;
      } else {
        const member = frame.members[index];
        if (!this.key(member.key)) return false;
        if (member.value === ACCESSOR) throw this.unsupported('accessor');
        if (!this.visit(member.value, 1)) return false;
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
        if (!Number.isFinite(value)) throw this.unsupported('non_finite_number');
        return this.literal(String(value), reserved);
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
    let frame: Frame;
    if (isArray) {
      const length = (value as unknown[]).length;
      if (!this.grow((length === 0 ? 2 : 2 * length + 1) - reserved)) return false;
      this.out?.push('[');
      frame = new Frame(value, length, null);
    } else {
      if (!this.grow(2 - reserved)) return false;
      const members = this.collect(value);
      if (members === null) return false;
      this.out?.push('{');
      frame = new Frame(value, members.length, members);
    }
    if (isSampled(this.stack.length)) this.sampledAncestors.add(value);
    this.stack.push(frame);
    return true;
  }

  /**
   * True when `value` repeats a container on the stack. The nearest {@link NEAR} frames are scanned
   * one by one; farther ones are only found when sampled. A cycle longer than `NEAR` repeats forever,
   * so a sampled container of it repeats at most one period plus `SAMPLE_EVERY` levels after its
   * first repetition, and {@link cycle} then reports that first repetition. Hashing every level
   * would cost a set insertion per container, which dominates on deep values.
   */
  private isAncestor(value: object): boolean {
    const stack = this.stack;
    const nearest = Math.max(0, stack.length - NEAR);
    for (let i = stack.length - 1; i >= nearest; i--) if (stack[i].container === value) return true;
    return stack.length > NEAR && this.sampledAncestors.has(value);
  }

  /** `cycle` at the shallowest container on the stack that repeats one of its ancestors. */
  private cycle(): RuntimePolicyError {
    const seen = new Set<object>();
    let depth = 0;
    while (depth < this.stack.length && !seen.has(this.stack[depth].container)) seen.add(this.stack[depth++].container);
    // the repeated container's own frame and everything below it leave the path
    this.stack.length = depth;
    return this.unsupported('cycle');
  }

  /**
   * The members to write, sorted by key in UTF-16 code-unit order; `null` as soon as their lower
   * bound passes the limit. Accessors are kept as a marker and reported in sorted order, unread.
   */
  private collect(object: object): Member[] | null {
    const members: Member[] = [];
    for (const key in object) {
      if (this.meter) this.meter.steps++;
      const descriptor = Object.hasOwn(object, key) ? Object.getOwnPropertyDescriptor(object, key) : undefined;
      if (descriptor === undefined) continue;
      const value = 'value' in descriptor ? descriptor.value : ACCESSOR;
      if (value === undefined) continue;
      if (!this.grow(key.length + (members.length === 0 ? 4 : 5))) return null;
      members.push({ key, value });
    }
    return members.sort(byKey);
  }

  /** Keys and indices from the root to the value being visited (or to the object whose key is bad). */
  private path(throughCurrentKey: boolean): string[] {
    const frames = throughCurrentKey ? this.stack.length : this.stack.length - 1;
    const path: string[] = [];
    for (let i = 0; i < frames; i++) {
      const frame = this.stack[i];
      const index = frame.index - 1;
      path.push(frame.members === null ? String(index) : frame.members[index].key);
    }
    return path;
  }

  private unsupported(kind: UnsupportedJsonKind): RuntimePolicyError {
    return new RuntimePolicyError('unsupported_json_term', { path: this.path(true), kind });
  }

  private invalidUtf8(throughCurrentKey: boolean): RuntimePolicyError {
    return new RuntimePolicyError('invalid_utf8', { path: this.path(throughCurrentKey) });
  }
}

/**
 * Walks `value` as canonical JSON, appending its text to `out` when given, and stops once the byte
 * count passes `limit`. Throws `RuntimePolicyError` for the first unsupported value in canonical order.
 */
export function walkJson(value: unknown, limit: number, out: string[] | null, meter: WorkMeter | null): WalkResult {
  const walker = new JsonWalker(limit, out, meter);
  const within = walker.run(value);
  return { exceeded: !within, bytes: walker.bytes };
}

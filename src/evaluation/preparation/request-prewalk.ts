import { types } from 'node:util';
import { EvalServiceError } from '../eval.errors';

/** The whole-request bounds of spec 05 §4.1, enforced by the pre-walk on the event loop. */
export const EVAL_REQUEST_LIMITS = Object.freeze({
  /** Deepest nesting of objects and arrays: `{}` is 1, `{"a":[1]}` is 2 (as the JSON body depth limit counts). */
  maxDepth: 64,
  /** Values in the whole request, the request itself included; every member of an object counts. */
  maxNodes: 50_000,
  /** UTF-8 bytes of all strings, object keys included. */
  maxStringBytes: 2 * 1024 * 1024,
});

/** Which bound a request passed (`evaluation_request_limit_exceeded`, `details.limit`). */
export type EvalRequestLimit = 'depth' | 'nodes' | 'bytes';

/** Why a request is not plain JSON data (`invalid_eval_request`, `details.reason`). */
export type InvalidEvalRequestReason =
  | 'cycle'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'undefined'
  | 'non_finite_number'
  | 'non_plain_object'
  | 'accessor'
  | 'hidden_property'
  | 'nul_character'
  | 'invalid_utf8';

/** A copy under construction; `keys` is `null` for an array. */
interface Frame {
  readonly source: object;
  readonly target: unknown[] | Record<string, unknown>;
  readonly keys: readonly (string | symbol)[] | null;
  readonly length: number;
  index: number;
}

/**
 * The bounded pre-walk of spec 05 §4.2, run on the event loop before a request is posted to the
 * preparation pool. It copies `request` into plain data (objects with a null prototype, so a
 * `"__proto__"` key stays an ordinary member; genuine arrays) and stops at the first node beyond
 * {@link EVAL_REQUEST_LIMITS}: `evaluation_request_limit_exceeded` with `details.limit` `depth`,
 * `nodes` or `bytes`. Anything that is not plain JSON data is refused with `invalid_eval_request`
 * and a `details.reason` ({@link InvalidEvalRequestReason}): cycles, functions, symbols, bigints,
 * `undefined` or holes in arrays, non-finite numbers, class instances, Proxies, accessors, symbol
 * keys and non-enumerable members, U+0000 and lone surrogates in strings or keys. An `undefined`
 * member of an object is dropped, as JSON drops it.
 *
 * The walk is iterative, reads properties through `Reflect.ownKeys` and descriptors only (no getter,
 * `toJSON` or Proxy trap ever runs), and its work follows the limits: an array or object with more
 * members than nodes are left is refused before any member is read. (Enumerating an object's keys is
 * O(keys) in V8 before the count can be compared; such an object can only come from an in-process
 * caller, an HTTP body being capped at 2 MiB.) The copy holds no reference into `request`, so
 * posting it to a worker (structured clone) runs no user code.
 *
 * @example
 * const copy = prewalkRequest(request); // throws EvalServiceError
 * pool.run({ request: copy, limits });
 */
export function prewalkRequest(request: unknown): unknown {
  try {
    return new Prewalk().copy(request);
  } catch (error) {
    if (EvalServiceError.isEvalServiceError(error)) throw error;
    // only an exotic object the checks do not foresee can throw while being looked at
    throw invalidRequest('non_plain_object');
  }
}

class Prewalk {
  private nodes = 0;
  private stringBytes = 0;
  /** The containers being copied, root first: exactly the ancestors of the next value. */
  private readonly frames: Frame[] = [];

  copy(request: unknown): unknown {
    const root = this.visit(request);
    const frames = this.frames;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      if (frame.index === frame.length) {
        frames.pop();
        continue;
      }
      const index = frame.index++;
      if (frame.keys === null) (frame.target as unknown[]).push(this.element(frame.source, index));
      else this.member(frame, frame.keys[index]);
    }
    return root;
  }

  private element(array: object, index: number): unknown {
    const descriptor = Object.getOwnPropertyDescriptor(array, index);
    if (descriptor === undefined) throw invalidRequest('undefined');
    if (!('value' in descriptor)) throw invalidRequest('accessor');
    if (descriptor.value === undefined) throw invalidRequest('undefined');
    return this.visit(descriptor.value);
  }

  private member(frame: Frame, key: string | symbol): void {
    if (typeof key === 'symbol') throw invalidRequest('hidden_property');
    this.countString(key);
    const descriptor = Object.getOwnPropertyDescriptor(frame.source, key) as PropertyDescriptor;
    if (!('value' in descriptor)) throw invalidRequest('accessor');
    if (descriptor.enumerable !== true) throw invalidRequest('hidden_property');
    if (descriptor.value === undefined) return;
    // a null-prototype target: `"__proto__"` is stored as an own member
    (frame.target as Record<string, unknown>)[key] = this.visit(descriptor.value);
  }

  /** Counts one node and returns its copy; a container's members are copied later by `copy`. */
  private visit(value: unknown): unknown {
    if (++this.nodes > EVAL_REQUEST_LIMITS.maxNodes) throw limitExceeded('nodes');
    switch (typeof value) {
      case 'string':
        this.countString(value);
        return value;
      case 'number':
        if (!Number.isFinite(value)) throw invalidRequest('non_finite_number');
        return value;
      case 'boolean':
        return value;
      case 'object':
        return value === null ? null : this.container(value);
      case 'undefined':
        throw invalidRequest('undefined');
      default:
        throw invalidRequest(typeof value as 'function' | 'symbol' | 'bigint');
    }
  }

  private container(value: object): unknown {
    // isProxy and isModuleNamespaceObject run no trap; after them the object may be looked at
    if (types.isProxy(value) || types.isModuleNamespaceObject(value)) throw invalidRequest('non_plain_object');
    const isArray = Array.isArray(value);
    const proto: unknown = Object.getPrototypeOf(value);
    if (isArray ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) throw invalidRequest('non_plain_object');
    for (const frame of this.frames) if (frame.source === value) throw invalidRequest('cycle');
    if (this.frames.length + 1 > EVAL_REQUEST_LIMITS.maxDepth) throw limitExceeded('depth');
    const keys = isArray ? null : Reflect.ownKeys(value);
    const length = keys === null ? (value as unknown[]).length : keys.length;
    if (length > EVAL_REQUEST_LIMITS.maxNodes - this.nodes) throw limitExceeded('nodes');
    const target: unknown[] | Record<string, unknown> = isArray ? [] : (Object.create(null) as Record<string, unknown>);
    this.frames.push({ source: value, target, keys, length, index: 0 });
    return target;
  }

  private countString(text: string): void {
    // every UTF-16 code unit takes at least one UTF-8 byte: a huge string is refused before it is scanned
    if (text.length > EVAL_REQUEST_LIMITS.maxStringBytes - this.stringBytes) throw limitExceeded('bytes');
    this.stringBytes += Buffer.byteLength(text, 'utf8');
    if (this.stringBytes > EVAL_REQUEST_LIMITS.maxStringBytes) throw limitExceeded('bytes');
    if (text.includes('\u0000')) throw invalidRequest('nul_character');
    if (!text.isWellFormed()) throw invalidRequest('invalid_utf8');
  }
}

const limitExceeded = (limit: EvalRequestLimit): EvalServiceError => new EvalServiceError('evaluation_request_limit_exceeded', { limit });
const invalidRequest = (reason: InvalidEvalRequestReason): EvalServiceError => new EvalServiceError('invalid_eval_request', { reason });

import { isUtf8 } from 'node:buffer';
import { types } from 'node:util';
import { isSafeIntegerAtLeast } from '../shared/options/plain-object';
import { walkJson, type WorkMeter } from './json-walker';
import { JsonError } from './json.errors';

/**
 * A measurement against a byte limit (frozen). Within the limit `bytes` is exact; when exceeded,
 * `limitBytes < bytes ≤` the true size, so `bytes` is exact when the true size is `limitBytes + 1`.
 */
export type MeasureResult = Readonly<{ exceeded: false; bytes: number }> | Readonly<{ exceeded: true; bytes: number }>;

const typedArrayByteLength = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype) as object,
  'byteLength',
)?.get as (this: Uint8Array) => number;

const result = (exceeded: boolean, bytes: number): MeasureResult =>
  Object.freeze({ exceeded, bytes }) as MeasureResult;

function assertLimit(limitBytes: unknown): asserts limitBytes is number {
  if (!isSafeIntegerAtLeast(limitBytes, 0)) throw new JsonError('invalid_measure_limit');
}

/**
 * UTF-8 bytes of `canonicalJson(value)`, counted without building the string and stopping as soon
 * as the count passes `limitBytes` (inclusive limit), so the cost follows the limit, not the input.
 * Throws like `canonicalJson` for an unsupported value reached before the limit is passed, and
 * `invalid_measure_limit` unless `limitBytes` is a non-negative safe integer.
 *
 * @example
 * measure({ a: 'abc' }, 16); // { exceeded: false, bytes: 11 }
 * measure('x'.repeat(1e8), 65536); // { exceeded: true, bytes: 100000002 }, at once
 */
export function measure(value: unknown, limitBytes: number): MeasureResult {
  return measureJson(value, limitBytes, null);
}

/** `measure` with a meter counting its steps; internal, for tests that bound the work done. */
export function measureJson(value: unknown, limitBytes: number, meter: WorkMeter | null): MeasureResult {
  assertLimit(limitBytes);
  const walked = walkJson(value, limitBytes, null, meter);
  return result(walked.exceeded, walked.bytes);
}

/**
 * Bytes of agent content: a string counts its own UTF-8 bytes (no quotes, no escapes), a
 * `Uint8Array` (or `Buffer`) its `byteLength` and must be valid UTF-8 within the limit; anything
 * else is measured as canonical JSON with {@link measure}.
 *
 * @example
 * measureContent('é', 10); // { exceeded: false, bytes: 2 }
 */
export function measureContent(content: unknown, limitBytes: number): MeasureResult {
  assertLimit(limitBytes);
  if (typeof content === 'string') {
    // every UTF-16 code unit takes at least one UTF-8 byte: the length is a lower bound
    if (content.length > limitBytes) return result(true, content.length);
    if (!content.isWellFormed()) throw new JsonError('invalid_utf8', { path: [] });
    const bytes = Buffer.byteLength(content, 'utf8');
    return result(bytes > limitBytes, bytes);
  }
  if (types.isUint8Array(content)) {
    // the intrinsic getter: an own `byteLength` property on the instance is not believed
    const bytes = typedArrayByteLength.call(content);
    if (bytes > limitBytes) return result(true, bytes);
    if (!isUtf8(content)) throw new JsonError('invalid_utf8', { path: [] });
    return result(false, bytes);
  }
  return measureJson(content, limitBytes, null);
}

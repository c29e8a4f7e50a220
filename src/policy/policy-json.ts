import { canonicalJson as kernelCanonicalJson, JsonError, measure as kernelMeasure, measureContent as kernelMeasureContent, type MeasureResult } from '../json';
import { RuntimePolicyError } from './runtime-policy.errors';

/** A {@link JsonError} as the policy's own error (same code and details); anything else unchanged. */
function asPolicyError(error: unknown): unknown {
  return JsonError.isJsonError(error) ? new RuntimePolicyError(error.code, error.details) : error;
}

/**
 * RFC 8785 canonical JSON (see `src/json`), throwing `RuntimePolicyError` (`unsupported_json_term`
 * `{path, kind}` or `invalid_utf8` `{path}`) as spec 02 §2.1 states.
 *
 * @example
 * canonicalJson({ b: [1e21, -0], a: 'é' }); // '{"a":"é","b":[1e+21,0]}'
 */
export function canonicalJson(value: unknown): string {
  try {
    return kernelCanonicalJson(value);
  } catch (error) {
    throw asPolicyError(error);
  }
}

/**
 * UTF-8 bytes of `canonicalJson(value)` against an inclusive limit, stopping once it is passed
 * (spec 02 §2.2); throws `RuntimePolicyError`.
 *
 * @example
 * measure({ a: 'abc' }, 16); // { exceeded: false, bytes: 11 }
 */
export function measure(value: unknown, limitBytes: number): MeasureResult {
  try {
    return kernelMeasure(value, limitBytes);
  } catch (error) {
    throw asPolicyError(error);
  }
}

/**
 * Bytes of agent content: a string's own UTF-8 bytes, a `Uint8Array`'s length (valid UTF-8), else
 * {@link measure} (spec 02 §2.3); throws `RuntimePolicyError`.
 *
 * @example
 * measureContent('é', 10); // { exceeded: false, bytes: 2 }
 */
export function measureContent(content: unknown, limitBytes: number): MeasureResult {
  try {
    return kernelMeasureContent(content, limitBytes);
  } catch (error) {
    throw asPolicyError(error);
  }
}

import * as json from '../json';
import { RuntimePolicyError } from './runtime-policy.errors';

/**
 * `fn` of `src/json` throwing the policy's own error: a `JsonError` becomes a `RuntimePolicyError`
 * with the same code and details (spec 02 §2 names `RuntimePolicyError`); anything else passes.
 */
function throwingPolicyErrors<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args);
    } catch (error) {
      throw json.JsonError.isJsonError(error) ? new RuntimePolicyError(error.code, error.details) : error;
    }
  };
}

/**
 * RFC 8785 canonical JSON of a JSON-like value (spec 02 §2.1); throws `RuntimePolicyError`
 * (`unsupported_json_term` `{path, kind}` or `invalid_utf8` `{path}`).
 *
 * @example
 * canonicalJson({ b: [1e21, -0], a: 'é' }); // '{"a":"é","b":[1e+21,0]}'
 */
export const canonicalJson: (value: unknown) => string = throwingPolicyErrors(json.canonicalJson);

/**
 * UTF-8 bytes of `canonicalJson(value)` against an inclusive limit, stopping once it is passed
 * (spec 02 §2.2); throws `RuntimePolicyError`.
 *
 * @example
 * measure({ a: 'abc' }, 16); // { exceeded: false, bytes: 11 }
 */
export const measure: (value: unknown, limitBytes: number) => json.MeasureResult = throwingPolicyErrors(json.measure);

/**
 * Bytes of agent content: a string's own UTF-8 bytes, a `Uint8Array`'s length (valid UTF-8), else
 * {@link measure} (spec 02 §2.3); throws `RuntimePolicyError`.
 *
 * @example
 * measureContent('é', 10); // { exceeded: false, bytes: 2 }
 */
export const measureContent: (content: unknown, limitBytes: number) => json.MeasureResult = throwingPolicyErrors(json.measureContent);

import { HttpRequestError } from './http-request.errors';

/** Deepest nesting of arrays and objects a JSON body may have, by default. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether the JSON text in `bytes` (UTF-8) nests arrays and objects deeper than `maxDepth`, in one
 * pass over the bytes that skips brackets inside strings. `{"a":[1]}` has depth 2, a scalar 0. The
 * text is not validated: invalid JSON is left for the parser to refuse.
 */
export function exceedsJsonDepth(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if ((byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) && depth > 0) {
      depth--;
    }
  }
  return false;
}

/** A body-parser `verify` hook: `(request, response, bytes, charset) => void`. */
export type BodyVerifier = (request: object, response: object, bytes: Buffer, charset: string | null) => void;

/** Marks a request whose JSON body was read and passed the depth check, so a later parse failure is known to be invalid JSON. */
export const JSON_BODY_VERIFIED: unique symbol = Symbol('agentRuntime.jsonBodyVerified');

/**
 * A body-parser `verify` hook refusing bodies nested deeper than `maxDepth` with a 400
 * `body_too_deep` {@link HttpRequestError}, before any pipe walks them recursively (a 10,000-deep
 * body otherwise overflows the stack of `ValidationPipe`). Bodies in UTF-16 or UTF-32 are decoded
 * first; a charset the runtime cannot decode is refused as `unsupported_charset`.
 *
 * @example
 * app.useBodyParser('json', { verify: jsonDepthVerifier(32) }) // or express.json({ verify })
 */
export function jsonDepthVerifier(maxDepth: number = DEFAULT_MAX_JSON_DEPTH): BodyVerifier {
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1) throw new TypeError('maxDepth must be a positive safe integer');
  return (request, _response, bytes, charset) => {
    if (exceedsJsonDepth(utf8Of(bytes, charset), maxDepth)) throw new HttpRequestError('body_too_deep', { max_depth: maxDepth });
    (request as { [JSON_BODY_VERIFIED]?: true })[JSON_BODY_VERIFIED] = true;
  };
}

function utf8Of(bytes: Buffer, charset: string | null): Uint8Array {
  if (charset === null || charset === 'utf-8' || charset === 'utf8') return bytes;
  let text: string;
  try {
    text = new TextDecoder(charset).decode(bytes);
  } catch {
    throw new HttpRequestError('unsupported_charset');
  }
  return Buffer.from(text, 'utf8');
}

import type { INestApplication } from '@nestjs/common';
import { dirname } from 'node:path';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
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

/** Options of {@link useJsonBodyLimits}. */
export interface JsonBodyLimitsOptions {
  /** Largest body, in bytes or as a body-parser size string; larger ones answer 413. @default '100kb' */
  limit?: number | string;
  /** Deepest nesting of arrays and objects; deeper bodies answer 400 `body_too_deep`. @default 64 */
  maxDepth?: number;
  /** Keep the raw bytes as `request.rawBody` (what Nest's `rawBody: true` does for its own parser). @default false */
  rawBody?: boolean;
  /**
   * Routes (path prefixes) with their own size limit, and the error their refusals answer with
   * instead of 413 `body_too_large` / 400 `body_too_deep` (e.g. a module's own limit code). @default []
   */
  routes?: readonly JsonRouteLimit[];
}

/** A path prefix with its own JSON body size limit. */
export interface JsonRouteLimit {
  readonly path: string;
  readonly limit: number | string;
  /** The error a too large or too deep body of this route is refused with. @default the generic codes */
  readonly refusal?: (code: 'body_too_large' | 'body_too_deep') => Error;
}

/**
 * Replaces the JSON body parser of a Nest application on the Express platform with one that has a
 * size limit and a depth limit. Call it before `app.init()` or `app.listen()`; install
 * `AgentRuntimeExceptionFilter` so that its refusals answer in the package's error shape.
 *
 * @example
 * const app = await NestFactory.create(AppModule);
 * useJsonBodyLimits(app, { limit: '100kb', maxDepth: 64 });
 */
export function useJsonBodyLimits(app: INestApplication, options: JsonBodyLimitsOptions = {}): void {
  const adapter = app.getHttpAdapter() as unknown as { getType(): string; useBodyParser?(type: string, rawBody: boolean, options: object): unknown };
  if (adapter.getType() !== 'express' || typeof adapter.useBodyParser !== 'function') throw new TypeError('useJsonBodyLimits needs the Express platform');
  const depth = jsonDepthVerifier(options.maxDepth);
  const keepRaw = options.rawBody === true;
  const verify: BodyVerifier = (request, response, bytes, charset) => {
    depth(request, response, bytes, charset);
    if (keepRaw) (request as { rawBody?: Buffer }).rawBody = bytes;
  };
  for (const route of options.routes ?? []) useRouteParser(app, route, verify);
  // rawBody false: Nest's own raw-body hook would otherwise replace this verify hook
  adapter.useBodyParser('json', false, { limit: options.limit ?? '100kb', verify });
}

type Middleware = (request: object, response: object, next: (error?: unknown) => void) => void;

/** A JSON parser mounted on `route.path` before the global one, which then sees the body as read. */
function useRouteParser(app: INestApplication, route: JsonRouteLimit, verify: BodyVerifier): void {
  // the Express that @nestjs/platform-express runs on, which the application need not depend on itself
  const platform = dirname(require.resolve('@nestjs/platform-express'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { json } = require(require.resolve('express', { paths: [platform] })) as { json(options: object): Middleware };
  const parse = json({ limit: route.limit, verify });
  const refusal = route.refusal;
  app.use(route.path, ((request, response, next) =>
    parse(request, response, (error?: unknown) => {
      if (error === undefined || refusal === undefined) return next(error);
      const code = AgentRuntimeError.isAgentRuntimeError(error, HttpRequestError) && error.code === 'body_too_deep' ? 'body_too_deep' : (error as { type?: unknown }).type === 'entity.too.large' ? 'body_too_large' : null;
      next(code === null ? error : refusal(code));
    })) as Middleware);
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

import { dirname } from 'node:path';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { HttpRequestError } from './http-request.errors';
import { jsonDepthVerifier, type BodyVerifier } from './json-depth-limit';

type Middleware = (request: object, response: object, next: (error?: unknown) => void) => void;

/** What {@link useJsonBodyLimits} uses of a Nest application (`INestApplication`). */
export interface JsonBodyLimitsTarget {
  getHttpAdapter(): object;
  use(path: string, middleware: Middleware): unknown;
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
export function useJsonBodyLimits(app: JsonBodyLimitsTarget, options: JsonBodyLimitsOptions = {}): void {
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

/** A JSON parser mounted on `route.path` before the global one, which then sees the body as read. */
function useRouteParser(app: JsonBodyLimitsTarget, route: JsonRouteLimit, verify: BodyVerifier): void {
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

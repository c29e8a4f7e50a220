import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { HttpRequestError } from './http-request.errors';

/** The methods that change something; a route answering them reads JSON only. */
const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * True for `application/json` with or without parameters (`application/json; charset=utf-8`), in
 * any letter case. `application/*+json` is not: the package's JSON parser does not read it, so its
 * body would reach the handler empty.
 */
export function isJsonContentType(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
}

/** Whether the request says it carries a body: a `Transfer-Encoding`, or a `Content-Length` other than 0. */
function announcesBody(headers: Headers): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && String(length).trim() !== '0');
}

/**
 * Refuses a POST, PUT, PATCH or DELETE whose body is not JSON: 415 `unsupported_media_type` when
 * the request has a `Content-Type` other than `application/json` (even with an empty body), or a
 * body without any `Content-Type`. A body-less request without a `Content-Type` passes (a `cancel`
 * with nothing to say), and other methods pass untouched.
 *
 * A browser sends a form (`application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain`)
 * to any site without asking it first, but asks (CORS preflight) before it sends `application/json`,
 * so a JSON-only route cannot be written to by another site's page. A body-less POST still can:
 * an app that authenticates with cookies also checks `Origin` (see docs/http.md).
 *
 * Use it through {@link JsonOnly}, which puts it ahead of the route's other guards (`AdmissionGuard`
 * among them), so nothing is admitted or created for a refused request.
 */
@Injectable()
export class JsonOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<{ method?: unknown; headers?: Headers }>();
    if (typeof request.method !== 'string' || !MUTATING_METHODS.has(request.method.toUpperCase())) return true;
    const headers = request.headers ?? {};
    const contentType = headers['content-type'];
    const refused = contentType === undefined ? announcesBody(headers) : !isJsonContentType(contentType);
    if (refused) throw new HttpRequestError('unsupported_media_type');
    return true;
  }
}

/**
 * Applies {@link JsonOnlyGuard} to a controller or a handler, ahead of the guards already declared
 * there whatever the order of the decorators (a class's guards run before its handlers' ones, and
 * global guards before both: register it globally, first, if `AdmissionGuard` is global).
 *
 * @example
 * @Controller('chat')
 * @JsonOnly()
 * export class ChatController {
 *   @Post() @Admission('helper') chat(@Body() body: ChatBody) { ... }
 * }
 */
export function JsonOnly(): ClassDecorator & MethodDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const holder = (descriptor === undefined ? target : descriptor.value) as object;
    const declared = (Reflect.getMetadata(GUARDS_METADATA, holder) as unknown[] | undefined) ?? [];
    Reflect.defineMetadata(GUARDS_METADATA, [JsonOnlyGuard, ...declared.filter((guard) => guard !== JsonOnlyGuard)], holder);
  };
}

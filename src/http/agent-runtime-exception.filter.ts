import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { logField } from '../shared/text/log-escape';
import { agentRuntimeErrorAnswer, retryAfterHeader, type HttpErrorAnswer } from './http-error-mapper';
import { bodyParserAnswer, httpExceptionAnswer, INTERNAL_ERROR_ANSWER } from './http-failure-answers';

const SAFE_TOKEN = /^[A-Za-z0-9_.:/-]{1,64}$/;

interface HttpRequestLike {
  method?: unknown;
  route?: { path?: unknown };
  routeOptions?: { url?: unknown };
}

/**
 * Answers every exception of an HTTP request in the package's shape `{status_code, error, code,
 * details?}` and never with what the client sent:
 * - an error of this package by the table of HTTP answers its class carries (`httpAnswers`, with
 *   `Retry-After` where the table says so: the seconds of `details.retry_after_ms`, else 1), so this
 *   filter knows no module;
 * - an `HttpException` already in that shape, or with an application's own body object, as it is;
 *   one with Nest's default body (`{statusCode, message}`) by its status, without the message;
 * - `ValidationPipe`'s errors as 400 `invalid_request_body`, body-parser's (invalid JSON,
 *   unsupported charset or encoding, too large, too deep) as 400/413/415 with a code;
 * - anything else as 500 `internal_error`.
 *
 * Each 5xx it decides is logged as one line without a stack or message: status, code, the error's
 * details (which never hold input), the route pattern. Body-parser failures reach it too, through
 * Nest's error handler on Express.
 *
 * @example
 * providers: [{ provide: APP_FILTER, useClass: AgentRuntimeExceptionFilter }]
 */
@Catch()
export class AgentRuntimeExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('AgentRuntimeHttp');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<HttpRequestLike>();
    const response = http.getResponse<object>();
    const answer = this.answer(exception, request);
    const adapter = this.adapterHost.httpAdapter;
    if (adapter.isHeadersSent(response)) {
      adapter.end(response);
      return;
    }
    const retryAfter = retryAfterHeader(answer);
    if (retryAfter !== undefined) adapter.setHeader(response, 'Retry-After', retryAfter);
    adapter.reply(response, answer.body, answer.status);
  }

  private answer(exception: unknown, request: HttpRequestLike): { status: number; retryAfter: boolean; retryAfterSeconds?: number; body: unknown } {
    if (exception instanceof HttpException) return httpExceptionAnswer(exception, request);
    const ours = AgentRuntimeError.isAgentRuntimeError(exception);
    const mapped = ours ? agentRuntimeErrorAnswer(exception) : bodyParserAnswer(exception);
    const answer = mapped ?? INTERNAL_ERROR_ANSWER;
    if (answer.status >= 500) {
      const facts = (mapped ? '' : errorFields(exception)) + (ours ? detailFields(exception) : '');
      this.logFailure(answer, facts, request);
    }
    return answer;
  }

  private logFailure(answer: HttpErrorAnswer, facts: string, request: HttpRequestLike): void {
    const line = `${answer.status} ${answer.body.code}${facts} route=${routeOf(request)}`;
    if (answer.status === 503) this.logger.warn(line);
    else this.logger.error(line);
  }
}

/** ` key=value` for every scalar detail (details never carry input; lists show their length). */
function detailFields(error: AgentRuntimeError<string>): string {
  let text = '';
  for (const [key, value] of Object.entries(error.details ?? {})) text += ` ${token(key)}=${Array.isArray(value) ? value.length : token(value)}`;
  return text;
}

/** The error's name and Node code, never its message or stack. */
function errorFields(error: unknown): string {
  if (typeof error !== 'object' || error === null) return ` error=${typeof error}`;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return ` error=${token(typeof name === 'string' ? name : 'unknown')} code=${token(typeof code === 'string' || typeof code === 'number' ? code : null)}`;
}

function routeOf(request: HttpRequestLike): string {
  const pattern = request.route?.path ?? request.routeOptions?.url;
  const method = typeof request.method === 'string' && /^[A-Z]{1,16}$/.test(request.method) ? request.method : logField(request.method);
  // a failure before routing (the body parser) has no route pattern, and the URL is never printed
  return typeof pattern === 'string' ? `${method} ${token(pattern)}` : `${method} (unrouted)`;
}

function token(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  const text = String(value);
  return SAFE_TOKEN.test(text) ? text : logField(text);
}

import { BadRequestException, HttpException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { bodyParserAnswer, httpExceptionAnswer } from './http-failure-answers';
import { JSON_BODY_VERIFIED } from './json-depth-limit';

const CANARY = 'canary-secret';

function parserError(type: string, status: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`quoting ${CANARY}`), { type, status, statusCode: status, body: CANARY, ...extra });
}

describe('answers to body-parser failures', () => {
  it.each([
    ['entity.too.large', 413, 'body_too_large'],
    ['parameters.too.many', 413, 'too_many_parameters'],
    ['charset.unsupported', 415, 'unsupported_charset'],
    ['encoding.unsupported', 415, 'unsupported_content_encoding'],
    ['request.size.invalid', 400, 'invalid_content_length'],
    ['request.aborted', 400, 'request_aborted'],
    ['entity.parse.failed', 400, 'invalid_json'],
    ['entity.verify.failed', 403, 'invalid_request_body'],
    ['stream.not.readable', 500, 'internal_error'],
    ['some.future.type', 422, 'unprocessable_entity'],
  ])('%s (status %i) answers %s without the message or body', (type, status, code) => {
    const answer = bodyParserAnswer(parserError(type, status));
    expect(answer?.body.code).toBe(code);
    expect(JSON.stringify(answer)).not.toContain(CANARY);
  });

  it('shows the configured limit of a body too large', () => {
    expect(bodyParserAnswer(parserError('entity.too.large', 413, { limit: 102_400 }))?.body.details).toEqual({ limit: 102_400 });
  });

  it('does not take other errors for body-parser ones', () => {
    expect(bodyParserAnswer(new TypeError('x'))).toBeUndefined();
    expect(bodyParserAnswer({ type: 'entity.too.large', status: 413 })).toBeUndefined();
  });
});

describe('answers to HttpExceptions', () => {
  it("replaces Nest's default body, which may quote the request, by a code", () => {
    const answer = httpExceptionAnswer(new NotFoundException(`Cannot GET /${CANARY}`), {});
    expect(answer).toEqual({ status: 404, retryAfter: false, body: { status_code: 404, error: 'Not Found', code: 'not_found' } });
    expect(httpExceptionAnswer(new HttpException(CANARY, 400), {}).body).toEqual({ status_code: 400, error: 'Bad Request', code: 'bad_request' });
  });

  it("answers ValidationPipe's default message list as invalid_request_body without the messages", () => {
    const answer = httpExceptionAnswer(new BadRequestException([`property ${CANARY} should not exist`]), {});
    expect(answer.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_request_body' });
  });

  it('answers a parse failure after the depth check as invalid_json', () => {
    const request = { [JSON_BODY_VERIFIED]: true, body: undefined };
    expect(httpExceptionAnswer(new BadRequestException(`Unexpected token in "${CANARY}"`), request).body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_json' });
    expect(httpExceptionAnswer(new BadRequestException('x'), { [JSON_BODY_VERIFIED]: true, body: {} }).body).toMatchObject({ code: 'bad_request' });
  });

  it("passes a body of the package's shape and an application's own body through", () => {
    const shaped = { status_code: 403, error: 'Forbidden', code: 'runtime_policy_denied', decision: { outcome: 'deny' } };
    expect(httpExceptionAnswer(new HttpException(shaped, 403), {}).body).toBe(shaped);
    const health = { status: 'error', info: {}, error: { database: { status: 'down' } }, details: {} };
    expect(httpExceptionAnswer(new ServiceUnavailableException(health), {})).toEqual({ status: 503, retryAfter: false, body: health });
  });
});

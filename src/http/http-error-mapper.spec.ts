import { HttpException } from '@nestjs/common';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';
import { httpErrorAnswer, httpErrorBody, httpErrorException, isHttpErrorBody, reasonPhrase, type HttpErrorTable } from './http-error-mapper';

type SampleCode = 'busy' | 'gone' | 'broken';

class SampleError extends AgentRuntimeError<SampleCode> {
  constructor(code: SampleCode, details?: ErrorDetails) {
    super('SampleError', code, details);
  }
}

const TABLE: HttpErrorTable<SampleCode> = { busy: { status: 503, retryAfter: true, details: ['reason'] }, gone: { status: 404 } };

describe('the HTTP error mapper', () => {
  it('answers a code by its rule: status, reason phrase, Retry-After', () => {
    expect(httpErrorAnswer(new SampleError('busy'), TABLE)).toEqual({ status: 503, retryAfter: true, body: { status_code: 503, error: 'Service Unavailable', code: 'busy' } });
    expect(httpErrorAnswer(new SampleError('gone'), TABLE)).toEqual({ status: 404, retryAfter: false, body: { status_code: 404, error: 'Not Found', code: 'gone' } });
  });

  it('answers a code the table leaves out with 500 and the code only', () => {
    expect(httpErrorAnswer(new SampleError('broken', { reason: 'x' }), TABLE).body).toEqual({ status_code: 500, error: 'Internal Server Error', code: 'broken' });
  });

  it('shows only the detail keys the rule names', () => {
    const answer = httpErrorAnswer(new SampleError('busy', { reason: 'instance_lock_not_held', sqlstate: '57P01' }), TABLE);
    expect(answer.body.details).toEqual({ reason: 'instance_lock_not_held' });
    expect(httpErrorAnswer(new SampleError('busy', { sqlstate: '57P01' }), TABLE).body).not.toHaveProperty('details');
    expect(httpErrorAnswer(new SampleError('gone', { reason: 'x' }), TABLE).body).not.toHaveProperty('details');
  });

  it('builds frozen bodies and an HttpException carrying them', () => {
    const answer = httpErrorAnswer(new SampleError('busy', { reason: 'r' }), TABLE);
    expect(Object.isFrozen(answer.body)).toBe(true);
    expect(Object.isFrozen(answer.body.details)).toBe(true);
    const exception = httpErrorException(answer);
    expect(exception).toBeInstanceOf(HttpException);
    expect(exception.getStatus()).toBe(503);
    expect(exception.getResponse()).toBe(answer.body);
  });

  it('names reason phrases, 499 included', () => {
    expect([400, 413, 415, 499, 503].map(reasonPhrase)).toEqual(['Bad Request', 'Payload Too Large', 'Unsupported Media Type', 'Client Closed Request', 'Service Unavailable']);
  });

  it('recognises the shape, extra keys allowed, and nothing else', () => {
    expect(isHttpErrorBody(httpErrorBody(403, 'denied'))).toBe(true);
    expect(isHttpErrorBody({ ...httpErrorBody(403, 'denied'), decision: {} })).toBe(true);
    expect(isHttpErrorBody({ statusCode: 400, message: 'x' })).toBe(false);
    expect(isHttpErrorBody('x')).toBe(false);
  });
});

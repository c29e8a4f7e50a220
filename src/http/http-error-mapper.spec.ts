import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';
import { agentRuntimeErrorAnswer, httpErrorAnswer, httpErrorBody, isHttpErrorBody, reasonPhrase, retryAfterHeader, retryAfterSecondsOf, type HttpErrorTable } from './http-error-mapper';

type SampleCode = 'busy' | 'gone' | 'broken' | 'by_reason';

const TABLE: HttpErrorTable<SampleCode> = {
  busy: { status: 503, retryAfter: true, details: ['reason'] },
  gone: { status: 404 },
  broken: { status: 500 },
  by_reason: (details) => (details?.reason === 'late' ? { status: 504 } : { status: 409, details: ['reason'] }),
};

class SampleError extends AgentRuntimeError<SampleCode> {
  static readonly codes: readonly SampleCode[] = ['busy', 'gone', 'broken', 'by_reason'];
  static readonly httpAnswers = TABLE;

  constructor(code: SampleCode, details?: ErrorDetails) {
    super('SampleError', code, details);
  }
}

/** An application's own subclass: no table of its own. */
class UnmappedError extends AgentRuntimeError<'busy'> {
  constructor() {
    super('UnmappedError', 'busy');
  }
}

describe('the HTTP error mapper', () => {
  it('answers a code by its rule: status, reason phrase, Retry-After', () => {
    expect(httpErrorAnswer(new SampleError('busy'), TABLE)).toEqual({ status: 503, retryAfter: true, body: { status_code: 503, error: 'Service Unavailable', code: 'busy' } });
    expect(httpErrorAnswer(new SampleError('gone'), TABLE)).toEqual({ status: 404, retryAfter: false, body: { status_code: 404, error: 'Not Found', code: 'gone' } });
    expect(httpErrorAnswer(new SampleError('broken', { reason: 'x' }), TABLE).body).toEqual({ status_code: 500, error: 'Internal Server Error', code: 'broken' });
  });

  it("answers a code whose rule depends on the error's details by that rule", () => {
    expect(httpErrorAnswer(new SampleError('by_reason', { reason: 'late' }), TABLE).body).toEqual({ status_code: 504, error: 'Gateway Timeout', code: 'by_reason' });
    expect(httpErrorAnswer(new SampleError('by_reason', { reason: 'taken' }), TABLE).body).toEqual({ status_code: 409, error: 'Conflict', code: 'by_reason', details: { reason: 'taken' } });
  });

  it('has no silent default: a code a table leaves out is a TypeError, never a 500 made up here', () => {
    const partial = { busy: { status: 503 } } as unknown as HttpErrorTable<SampleCode>;
    expect(() => httpErrorAnswer(new SampleError('gone'), partial)).toThrow(TypeError);
    expect(() => httpErrorAnswer(new SampleError('gone'), { ...TABLE, gone: undefined } as unknown as HttpErrorTable<SampleCode>)).toThrow(TypeError);
  });

  it('reads the table from the class of the error, subclasses included, and answers nothing for a class without one', () => {
    expect(agentRuntimeErrorAnswer(new SampleError('busy', { reason: 'r' }))).toEqual(httpErrorAnswer(new SampleError('busy', { reason: 'r' }), TABLE));
    class Subclass extends SampleError {}
    expect(agentRuntimeErrorAnswer(new Subclass('gone'))?.status).toBe(404);
    expect(agentRuntimeErrorAnswer(new UnmappedError())).toBeUndefined();
  });

  it('shows only the detail keys the rule names', () => {
    const answer = httpErrorAnswer(new SampleError('busy', { reason: 'instance_lock_not_held', sqlstate: '57P01' }), TABLE);
    expect(answer.body.details).toEqual({ reason: 'instance_lock_not_held' });
    expect(httpErrorAnswer(new SampleError('busy', { sqlstate: '57P01' }), TABLE).body).not.toHaveProperty('details');
    expect(httpErrorAnswer(new SampleError('gone', { reason: 'x' }), TABLE).body).not.toHaveProperty('details');
  });

  it('builds frozen answers and bodies', () => {
    const answer = httpErrorAnswer(new SampleError('busy', { reason: 'r' }), TABLE);
    expect(Object.isFrozen(answer)).toBe(true);
    expect(Object.isFrozen(answer.body)).toBe(true);
    expect(Object.isFrozen(answer.body.details)).toBe(true);
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

  describe('Retry-After seconds (spec 09 §5: ceil(retry_after_ms / 1000))', () => {
    it.each([
      [2500, 3],
      [1000, 1],
      [1001, 2],
      [1, 1],
      [0, 1],
      [60_000, 60],
    ])('retry_after_ms %p → %p s', (ms, seconds) => {
      expect(retryAfterSecondsOf({ retry_after_ms: ms })).toBe(seconds);
      const answer = httpErrorAnswer(new SampleError('busy', { reason: 'rate', retry_after_ms: ms }), TABLE);
      expect(answer.retryAfterSeconds).toBe(seconds);
      expect(retryAfterHeader(answer)).toBe(String(seconds));
    });

    it.each([[undefined], [{}], [{ retry_after_ms: -5 }], [{ retry_after_ms: 'soon' }], [{ retry_after_ms: Number.NaN }]])('without a usable retry_after_ms (%p) the header is 1', (details) => {
      const answer = httpErrorAnswer(new SampleError('busy', details as ErrorDetails | undefined), TABLE);
      expect(answer).not.toHaveProperty('retryAfterSeconds');
      expect(retryAfterHeader(answer)).toBe('1');
    });

    it('a rule without Retry-After sends none, whatever the details say', () => {
      const answer = httpErrorAnswer(new SampleError('gone', { retry_after_ms: 4000 }), TABLE);
      expect(answer).toEqual({ status: 404, retryAfter: false, body: { status_code: 404, error: 'Not Found', code: 'gone' } });
      expect(retryAfterHeader(answer)).toBeUndefined();
    });

    it('retry_after_ms is read from the error, shown to the client only when the rule lists it', () => {
      const answer = httpErrorAnswer(new SampleError('busy', { reason: 'rate', retry_after_ms: 2500 }), TABLE);
      expect(answer.body.details).toEqual({ reason: 'rate' });
      expect(retryAfterHeader(answer)).toBe('3');
    });
  });
});

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import type { ModelRequest } from '../../src/runner/models/model.types';
import { OpenAICompatibleModel, type OpenAICompatibleModelOptions } from '../../src/runner/models/openai-compatible-model';
import { RunnerError } from '../../src/runner/runner.errors';

const KEY_CANARY = 'sk-canary-key-5f1d0c';
const BODY_CANARY = 'body-canary-secret-93ab';

interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: any;
  /** Resolves when the client's connection for this request closes. */
  readonly closed: Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A Chat Completions server on loopback that answers each request with the next queued handler. */
class FakeChatServer {
  readonly received: Received[] = [];
  readonly #handlers: Handler[] = [];
  readonly #server: Server;

  constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((resolve) => request.socket.once('close', () => resolve()));
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        this.received.push({ method: request.method, url: request.url, headers: request.headers, body: text === '' ? undefined : JSON.parse(text), closed });
        const handler = this.#handlers.shift() ?? ((_request, res) => json(res, 418, { error: 'no handler queued' }));
        handler(request, response);
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  next(handler: Handler): void {
    this.#handlers.push(handler);
  }

  answer(status: number, body: unknown): void {
    this.next((_request, response) => json(response, status, body));
  }

  get last(): Received {
    return this.received[this.received.length - 1];
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json' }).end(text);
}

const completion = (message: unknown, usage?: unknown) => ({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }], ...(usage ? { usage } : {}) });

const HELLO: ModelRequest = { contents: [{ role: 'user', content: { role: 'user', parts: [{ text: 'hi' }] } }], tools: [] };

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** Nothing a caller can see of the error holds the key or the body the server sent. */
function expectClean(error: unknown): void {
  for (const view of [inspect(error, { depth: 10 }), JSON.stringify(error), String(error), JSON.stringify((error as RunnerError).details ?? null)]) {
    expect(view).not.toContain(KEY_CANARY);
    expect(view).not.toContain(BODY_CANARY);
  }
}

describe('OpenAICompatibleModel against a Chat Completions server on loopback (spec 03 §3)', () => {
  const server = new FakeChatServer();
  let baseUrl: string;
  const live = () => new AbortController().signal;
  const model = (options: Partial<OpenAICompatibleModelOptions> = {}) => new OpenAICompatibleModel({ baseUrl, model: 'gpt-test', apiKey: KEY_CANARY, ...options });

  beforeAll(async () => {
    baseUrl = await server.listen();
  });

  afterAll(() => server.close());

  describe('answers', () => {
    it('maps a text answer with its usage, POSTing JSON to ${baseUrl}/chat/completions', async () => {
      server.answer(200, completion({ role: 'assistant', content: 'Hello there' }, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }));
      const subject = model();
      expect(subject.name).toBe('gpt-test');
      expect(await subject.generate(HELLO, live())).toEqual({ text: 'Hello there', usage: { inputTokens: 9, outputTokens: 2 } });
      expect(server.last).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
      expect(server.last.headers['content-type']).toBe('application/json');
      expect(server.last.body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    });

    it('accepts a base URL with a trailing slash', async () => {
      server.answer(200, completion({ content: 'ok' }));
      await model({ baseUrl: `${baseUrl}/` }).generate(HELLO, live());
      expect(server.last.url).toBe('/v1/chat/completions');
    });

    it('maps tool calls, parsing args and keeping unparseable args as the text sent', async () => {
      server.answer(
        200,
        completion({
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"weather","days":[1,2]}' } },
            { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '{"q": weather' } },
          ],
        }),
      );
      expect(await model().generate(HELLO, live())).toEqual({
        toolCalls: [
          { id: 'call_1', name: 'lookup', args: { q: 'weather', days: [1, 2] } },
          { id: 'call_2', name: 'lookup', args: '{"q": weather' },
        ],
      });
    });

    it('uses an injected fetch', async () => {
      const injected = jest.fn<ReturnType<typeof fetch>, Parameters<typeof fetch>>((input, init) => fetch(input, init));
      server.answer(200, completion({ content: 'via injected fetch' }));
      expect(await model({ fetch: injected }).generate(HELLO, live())).toEqual({ text: 'via injected fetch' });
      expect(injected).toHaveBeenCalledTimes(1);
      expect(String(injected.mock.calls[0][0])).toBe(`${baseUrl}/chat/completions`);
    });
  });

  describe('request sent', () => {
    it('carries the mapped history, tools and settings, and the bearer key', async () => {
      server.answer(200, completion({ content: 'ok' }));
      const request: ModelRequest = {
        instruction: 'Answer briefly.',
        contents: [
          { role: 'user', content: { role: 'user', parts: [{ text: 'weather in' }, { data: { city: 'Oslo', at: 1 } }] } },
          { role: 'model', toolCalls: [{ id: 'call-1', name: 'lookup', args: { q: 'Oslo' } }] },
          { role: 'tool', callId: 'call-1', name: 'lookup', response: { success: true, result: { temp_c: -3 } } },
        ],
        tools: [{ name: 'lookup', description: 'Weather lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }],
      };
      await model({ temperature: 0.2, maxTokens: 128, headers: { 'x-tenant': 'acme' } }).generate(request, live());
      expect(server.last.body).toEqual({
        model: 'gpt-test',
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'weather in\n{"at":1,"city":"Oslo"}' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call-1', type: 'function', function: { name: 'lookup', arguments: '{"q":"Oslo"}' } }] },
          { role: 'tool', tool_call_id: 'call-1', content: '{"result":{"temp_c":-3},"success":true}' },
        ],
        tools: [{ type: 'function', function: { name: 'lookup', description: 'Weather lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }],
        temperature: 0.2,
        max_tokens: 128,
      });
      expect(server.last.headers.authorization).toBe(`Bearer ${KEY_CANARY}`);
      expect(server.last.headers['x-tenant']).toBe('acme');
    });

    it('sends no Authorization header when the key is empty', async () => {
      server.answer(200, completion({ content: 'ok' }));
      await model({ apiKey: '' }).generate(HELLO, live());
      expect(server.last.headers.authorization).toBeUndefined();
    });

    describe('with OPENAI_API_KEY in the environment', () => {
      const saved = process.env.OPENAI_API_KEY;
      beforeEach(() => {
        process.env.OPENAI_API_KEY = `${KEY_CANARY}-env`;
      });
      afterEach(() => {
        if (saved === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = saved;
      });

      it('takes the key from it by default', async () => {
        server.answer(200, completion({ content: 'ok' }));
        await new OpenAICompatibleModel({ baseUrl, model: 'gpt-test' }).generate(HELLO, live());
        expect(server.last.headers.authorization).toBe(`Bearer ${KEY_CANARY}-env`);
      });

      it('lets an explicit empty key switch it off', async () => {
        server.answer(200, completion({ content: 'ok' }));
        await model({ apiKey: '' }).generate(HELLO, live());
        expect(server.last.headers.authorization).toBeUndefined();
      });
    });

    it('lets the key win over an Authorization header given in headers', async () => {
      server.answer(200, completion({ content: 'ok' }));
      await model({ headers: { Authorization: 'Basic other' } }).generate(HELLO, live());
      expect(server.last.headers.authorization).toBe(`Bearer ${KEY_CANARY}`);
    });
  });

  describe('failures', () => {
    it.each([500, 429])('HTTP %i is model_failed http_status with the status and without the body', async (status) => {
      server.answer(status, { error: { message: `quota for ${BODY_CANARY}`, key: KEY_CANARY } });
      const error = await rejection(model().generate(HELLO, live()));
      expect(RunnerError.isRunnerError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'http_status', status } });
      expectClean(error);
    });

    it('does not follow a redirect: it is http_status and the key goes nowhere else', async () => {
      server.next((_request, response) => response.writeHead(307, { location: `${baseUrl}/elsewhere` }).end());
      const before = server.received.length;
      const error = await rejection(model().generate(HELLO, live()));
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'http_status', status: 307 } });
      expect(server.received.length).toBe(before + 1);
    });

    it('a server that never answers is model_failed timeout after timeoutMs, and the connection is closed', async () => {
      server.next(() => undefined);
      const started = performance.now();
      const error = await rejection(model({ timeoutMs: 200 }).generate(HELLO, live()));
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'timeout' } });
      expect(performance.now() - started).toBeGreaterThanOrEqual(190);
      expect(performance.now() - started).toBeLessThan(5000);
      await expect(server.last.closed).resolves.toBeUndefined();
      expectClean(error);
    });

    it('a body that stops half way is model_failed timeout when the time runs out', async () => {
      server.next((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"choices":[');
      });
      const error = await rejection(model({ timeoutMs: 200 }).generate(HELLO, live()));
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'timeout' } });
      await server.last.closed;
    });

    it('an abort by the caller rejects with the signal reason (a cancellation, not model_failed)', async () => {
      let arrived!: () => void;
      const waiting = new Promise<void>((resolve) => (arrived = resolve));
      server.next(() => arrived());
      const controller = new AbortController();
      const pending = model().generate(HELLO, controller.signal);
      await waiting;
      const reason = { cancelled: 'consumer_closed' };
      controller.abort(reason);
      expect(await rejection(pending)).toBe(reason);
      await expect(server.last.closed).resolves.toBeUndefined();
    });

    it('an already aborted signal rejects with its reason without a request', async () => {
      const controller = new AbortController();
      controller.abort('stop');
      const before = server.received.length;
      expect(await rejection(model().generate(HELLO, controller.signal))).toBe('stop');
      expect(server.received.length).toBe(before);
    });

    it.each<[string, unknown]>([
      ['a body that is not JSON', `<html>${BODY_CANARY}</html>`],
      ['JSON that is not a completion', { result: BODY_CANARY }],
      ['a completion without choices', { choices: [] }],
    ])('%s is model_failed invalid_response', async (_name, body) => {
      server.answer(200, body);
      const error = await rejection(model().generate(HELLO, live()));
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'invalid_response' } });
      expectClean(error);
    });

    it('a body that is not UTF-8 is model_failed invalid_response', async () => {
      server.next((_request, response) => response.writeHead(200).end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])));
      expect(await rejection(model().generate(HELLO, live()))).toMatchObject({ details: { reason: 'invalid_response' } });
    });

    it.each([
      ['declared by content-length', true],
      ['streamed without a length', false],
    ])('a body over 8 MiB is model_failed invalid_response (%s)', async (_name, declared) => {
      // a valid completion padded with whitespace, so only the size bound can refuse it
      const text = Buffer.from(JSON.stringify(completion({ content: 'ok' })));
      const huge = Buffer.concat([text, Buffer.alloc(8 * 1024 * 1024 + 1 - text.length, 0x20)]);
      server.next((_request, response) => {
        response.writeHead(200, declared ? { 'content-length': huge.length } : {});
        response.end(huge);
      });
      expect(await rejection(model().generate(HELLO, live()))).toMatchObject({ code: 'model_failed', details: { reason: 'invalid_response' } });
    });

    it('a body of exactly 8 MiB is read', async () => {
      const text = Buffer.from(JSON.stringify(completion({ content: 'ok' })));
      server.next((_request, response) => response.writeHead(200).end(Buffer.concat([text, Buffer.alloc(8 * 1024 * 1024 - text.length, 0x20)])));
      expect(await model().generate(HELLO, live())).toEqual({ text: 'ok' });
    });

    it('a refused connection is model_failed network', async () => {
      const closedPort = new FakeChatServer();
      const url = await closedPort.listen();
      await closedPort.close();
      const error = await rejection(model({ baseUrl: url }).generate(HELLO, live()));
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'network' } });
      expectClean(error);
    });

    it('a connection dropped before the answer is model_failed network', async () => {
      server.next((request) => request.socket.destroy());
      expect(await rejection(model().generate(HELLO, live()))).toMatchObject({ code: 'model_failed', details: { reason: 'network' } });
    });
  });

  describe('the key stays private', () => {
    it('is not visible through util.inspect, JSON.stringify or the own keys of the model', () => {
      const subject = model({ headers: { 'x-api-key': KEY_CANARY } });
      for (const view of [inspect(subject, { depth: 10, showHidden: true }), JSON.stringify(subject), Object.keys(subject).join(',')]) {
        expect(view).not.toContain(KEY_CANARY);
      }
    });
  });

  describe('options', () => {
    it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
      ['baseUrl missing', { model: 'm' }, { field: 'baseUrl' }],
      ['both required options missing', {}, { fields: ['baseUrl', 'model'] }],
      ['a baseUrl that is not http(s)', { baseUrl: 'ftp://127.0.0.1', model: 'm' }, { field: 'baseUrl' }],
      ['a baseUrl with credentials', { baseUrl: `http://user:${KEY_CANARY}@127.0.0.1`, model: 'm' }, { field: 'baseUrl' }],
      ['a baseUrl with a query', { baseUrl: 'http://127.0.0.1/v1?x=1', model: 'm' }, { field: 'baseUrl' }],
      ['an empty model', { baseUrl: 'http://127.0.0.1', model: '' }, { field: 'model' }],
      ['an apiKey with a line break', { baseUrl: 'http://127.0.0.1', model: 'm', apiKey: `${KEY_CANARY}\n` }, { field: 'apiKey' }],
      ['a timeoutMs of 0', { baseUrl: 'http://127.0.0.1', model: 'm', timeoutMs: 0 }, { field: 'timeoutMs' }],
      ['a fractional timeoutMs', { baseUrl: 'http://127.0.0.1', model: 'm', timeoutMs: 1.5 }, { field: 'timeoutMs' }],
      ['a header with a non-string value', { baseUrl: 'http://127.0.0.1', model: 'm', headers: { 'x-a': 1 } }, { field: 'headers' }],
      ['a header value with a line break', { baseUrl: 'http://127.0.0.1', model: 'm', headers: { 'x-a': `${KEY_CANARY}\r\nx: y` } }, { field: 'headers' }],
      ['a header name with a space', { baseUrl: 'http://127.0.0.1', model: 'm', headers: { 'x a': 'v' } }, { field: 'headers' }],
      ['a negative temperature', { baseUrl: 'http://127.0.0.1', model: 'm', temperature: -0.1 }, { field: 'temperature' }],
      ['maxTokens 0', { baseUrl: 'http://127.0.0.1', model: 'm', maxTokens: 0 }, { field: 'maxTokens' }],
      ['a fetch that is not a function', { baseUrl: 'http://127.0.0.1', model: 'm', fetch: {} }, { field: 'fetch' }],
      ['an unknown key', { baseUrl: 'http://127.0.0.1', model: 'm', apikey: KEY_CANARY }, { field: 'apikey' }],
    ])('refuses %s with invalid_runner_options naming the option, never its value', (_name, options, details) => {
      let error: unknown;
      try {
        new OpenAICompatibleModel(options as never);
      } catch (caught) {
        error = caught;
      }
      expect(RunnerError.isRunnerError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid_runner_options', details });
      expectClean(error);
    });

    it('refuses an OPENAI_API_KEY that cannot be sent as a header', () => {
      const saved = process.env.OPENAI_API_KEY;
      process.env.OPENAI_API_KEY = `${KEY_CANARY} with space`;
      try {
        expect(() => new OpenAICompatibleModel({ baseUrl: 'http://127.0.0.1', model: 'm' })).toThrow(expect.objectContaining({ code: 'invalid_runner_options', details: { field: 'apiKey' } }));
      } finally {
        if (saved === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = saved;
      }
    });

    it('copies the headers, so changing the object later changes nothing', async () => {
      const headers: Record<string, string> = { 'x-tenant': 'acme' };
      const subject = model({ headers });
      headers['x-tenant'] = 'changed';
      server.answer(200, completion({ content: 'ok' }));
      await subject.generate(HELLO, live());
      expect(server.last.headers['x-tenant']).toBe('acme');
    });
  });
});

import { systemClock } from '../../shared/time/clock';
import { types } from 'node:util';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn, isFunction, isNonEmptyString } from '../../shared/options/option-rules';
import { isPlainObject } from '../../shared/options/plain-object';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import type { Model, ModelRequest, ModelResponse } from './model.types';
import { fromChatResponseBody, toChatRequestBody, type ChatRequestSettings } from './openai-chat-mapping';
import { RunnerError } from '../runner.errors';

/** Options of an {@link OpenAICompatibleModel} (spec 03 §3). Unknown keys are refused. */
export interface OpenAICompatibleModelOptions {
  /** Base URL of the server (`http:` or `https:`, no credentials, query or fragment); requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  /** The `model` sent with every request; also this model's `name`. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`; left out when empty. Never logged or put in errors. @default process.env.OPENAI_API_KEY */
  apiKey?: string;
  /** Time allowed per call, 1..2,147,483,647 ms, combined with the invocation signal. @default 60000 */
  timeoutMs?: number;
  /** Extra request headers, passed through (`Authorization` from `apiKey`, when given, wins). @default none */
  headers?: Readonly<Record<string, string>>;
  /** `temperature`, a finite number ≥ 0, passed through. @default none (the server's) */
  temperature?: number;
  /** `max_tokens`, a positive integer, passed through. @default none (the server's) */
  maxTokens?: number;
  /** The fetch implementation. @default the global `fetch` */
  fetch?: typeof fetch;
}

/** Largest response body read; a larger one is `invalid_response`. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_TIMER_MS = 2_147_483_647;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, spaces and tabs inside only: what a header value may hold without being rejected or folded.
const HEADER_VALUE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$|^$/;
const API_KEY = /^[\x21-\x7e]*$/;

const OPTION_RULES: OptionRules<keyof OpenAICompatibleModelOptions> = {
  baseUrl: isBaseUrl,
  model: isNonEmptyString,
  apiKey: (v) => typeof v === 'string' && API_KEY.test(v),
  timeoutMs: integerIn(1, MAX_TIMER_MS),
  headers: isHeaderRecord,
  temperature: (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  maxTokens: integerIn(1),
  fetch: isFunction,
};

/** Why a call was aborted by this model itself, so it is told apart from the caller's abort. */
const TIMED_OUT = Symbol('timed out');
const NETWORK: ErrorDetails = { reason: 'network' };
const INVALID_RESPONSE: ErrorDetails = { reason: 'invalid_response' };

/**
 * A {@link Model} that speaks Chat Completions to any OpenAI-compatible server over HTTP. The key,
 * headers and settings live in private fields, so neither `JSON.stringify` nor `util.inspect` of the
 * model shows them. Failures are `RunnerError('model_failed', {reason, status?})` and never carry a
 * response body; an abort of the invocation signal rejects with that signal's reason.
 *
 * @example
 * const model = new OpenAICompatibleModel({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen2.5' });
 * const response = await model.generate({ contents: [], tools: [] }, AbortSignal.timeout(5000));
 */
export class OpenAICompatibleModel implements Model {
  /** The `model` option. */
  readonly name: string;
  readonly #url: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #settings: ChatRequestSettings;
  readonly #fetch: typeof fetch;

  /** Validates `options`; throws `invalid_runner_options` with `{field}` or `{fields}`. */
  constructor(options: OpenAICompatibleModelOptions) {
    const read = readOptions(options, OPTION_RULES, { name: 'options', unknownKeys: 'refuse' });
    if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
    const o = read.values as Partial<OpenAICompatibleModelOptions>;
    const missing = (['baseUrl', 'model'] as const).filter((key) => o[key] === undefined);
    if (missing.length > 0) throw new RunnerError('invalid_runner_options', optionFailureDetails(missing));
    const apiKey = o.apiKey ?? process.env.OPENAI_API_KEY ?? '';
    if (!API_KEY.test(apiKey)) throw new RunnerError('invalid_runner_options', { field: 'apiKey' });
    this.name = o.model as string;
    this.#url = `${(o.baseUrl as string).replace(/\/+$/, '')}/chat/completions`;
    this.#apiKey = apiKey;
    this.#timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#headers = Object.freeze({ ...(o.headers ?? {}) });
    this.#settings = Object.freeze({ model: this.name, temperature: o.temperature, maxTokens: o.maxTokens });
    this.#fetch = o.fetch ?? globalThis.fetch;
  }

  /** One Chat Completions call for `request`; stops when `signal` aborts or the timeout passes. */
  async generate(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    signal.throwIfAborted();
    const body = requestBody(request, this.#settings);
    const timer = new AbortController();
    const handle = systemClock.setTimer(() => timer.abort(TIMED_OUT), this.#timeoutMs);
    const callSignal = AbortSignal.any([signal, timer.signal]);
    const failure = (details: ErrorDetails): unknown => {
      if (signal.aborted) return signal.reason;
      return modelFailed(timer.signal.aborted ? { reason: 'timeout' } : details);
    };
    try {
      const send = this.#fetch;
      let response: Response;
      try {
        response = await send(this.#url, { method: 'POST', headers: this.#requestHeaders(), body, signal: callSignal, redirect: 'manual' });
      } catch {
        throw failure(NETWORK);
      }
      if (!isResponse(response)) throw failure(INVALID_RESPONSE);
      if (response.status < 200 || response.status > 299) {
        await discard(response);
        throw failure({ reason: 'http_status', status: response.status });
      }
      const parsed = fromChatResponseBody(await readJsonBody(response, failure));
      if (parsed === null) throw failure(INVALID_RESPONSE);
      return parsed;
    } finally {
      systemClock.clearTimer(handle);
    }
  }

  #requestHeaders(): Headers {
    const headers = new Headers();
    for (const [name, value] of Object.entries(this.#headers)) headers.set(name, value);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json');
    if (this.#apiKey !== '') headers.set('authorization', `Bearer ${this.#apiKey}`);
    return headers;
  }
}

function requestBody(request: ModelRequest, settings: ChatRequestSettings): string {
  try {
    return JSON.stringify(toChatRequestBody(request, settings));
  } catch {
    // the Runner only sends JSON-safe history; a request that is not cannot be put on the wire
    throw modelFailed({ reason: 'invalid_response' });
  }
}

/** Reads at most {@link MAX_RESPONSE_BYTES} of the body as UTF-8 JSON. */
async function readJsonBody(response: Response, failure: (details: ErrorDetails) => unknown): Promise<unknown> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (response.body === null || declared > MAX_RESPONSE_BYTES) {
    await discard(response);
    throw failure(INVALID_RESPONSE);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      throw failure(NETWORK);
    }
    if (chunk.done) break;
    size += chunk.value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw failure(INVALID_RESPONSE);
    }
    chunks.push(chunk.value);
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))) as unknown;
  } catch {
    throw failure(INVALID_RESPONSE);
  }
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // the connection is going away anyway
  }
}

function modelFailed(details: ErrorDetails): RunnerError {
  return new RunnerError('model_failed', details);
}

/** Duck-typed, so a fetch from another realm or library works too. */
function isResponse(value: unknown): value is Response {
  try {
    const candidate = value as Response;
    return (
      typeof value === 'object' &&
      value !== null &&
      Number.isInteger(candidate.status) &&
      typeof candidate.headers?.get === 'function' &&
      (candidate.body === null || typeof candidate.body?.getReader === 'function')
    );
  } catch {
    return false;
  }
}

function isBaseUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '' && !value.includes('?') && !value.includes('#');
}

function isHeaderRecord(value: unknown): boolean {
  if (!isPlainObject(value) || types.isProxy(value)) return false;
  return Reflect.ownKeys(value).every((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    return typeof key === 'string' && HEADER_NAME.test(key) && 'value' in descriptor && typeof descriptor.value === 'string' && HEADER_VALUE.test(descriptor.value);
  });
}

import * as http from 'node:http';

/** One answer (or the lack of one) as the load generator saw it. */
export interface RecordedResponse {
  /** The instance's label (`a`, `b`). */
  readonly instance: string;
  /** Method and route template, e.g. `POST /runs/:id/confirmations/:callId`. */
  readonly route: string;
  /** Wall-clock ms the request was sent. */
  readonly sentAtMs: number;
  readonly elapsedMs: number;
  /** The HTTP status; 0 when no answer came (connection error or timeout). */
  readonly status: number;
  /** The body's `code` (error answers), or the errno / `timeout` of a request without an answer. */
  readonly code: string | null;
  /** The `Retry-After` header, when present. */
  readonly retryAfter: string | null;
}

/** A response with its parsed body, for the caller to act on. */
export interface Answer {
  readonly status: number;
  readonly body: any;
}

/** Sends requests to the instances and records every answer. */
export class ResponseLog {
  readonly records: RecordedResponse[] = [];

  constructor(private readonly timeoutMs = 30_000) {}

  /**
   * Sends one request over its own connection and records the answer under `route`; a connection
   * error or a timeout is recorded as status 0 and answered as such.
   */
  async send(instance: { label: string; baseUrl: string }, route: string, path: string, options: { method?: string; body?: unknown; token?: string; record?: boolean } = {}): Promise<Answer> {
    const sentAtMs = Date.now();
    const record = (status: number, code: string | null, retryAfter: string | null) => {
      if (options.record !== false) this.records.push({ instance: instance.label, route, sentAtMs, elapsedMs: Date.now() - sentAtMs, status, code, retryAfter });
    };
    try {
      const { status, headers, text } = await request(new URL(path, instance.baseUrl), options, this.timeoutMs);
      const body = parse(text);
      const retryAfter = headers['retry-after'];
      record(status, typeof body?.code === 'string' ? body.code : null, typeof retryAfter === 'string' ? retryAfter : null);
      return { status, body };
    } catch (error) {
      record(0, (error as NodeJS.ErrnoException).code ?? 'no_answer', null);
      return { status: 0, body: undefined };
    }
  }
}

function request(url: URL, options: { method?: string; body?: unknown; token?: string }, timeoutMs: number): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string | number> = {};
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', agent: false, headers });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(payload);
  });
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

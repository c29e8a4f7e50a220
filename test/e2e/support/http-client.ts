import * as http from 'node:http';

/** A finished HTTP exchange as the client saw it. */
export interface HttpResult {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The raw body text. */
  readonly text: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  readonly body: any;
}

/** A request in flight over its own TCP connection (no keep-alive agent). */
export interface PendingRequest {
  /** Settles with the response; rejects when the connection fails or is aborted. */
  readonly result: Promise<HttpResult>;
  /** True once the full response has arrived. */
  readonly settled: () => boolean;
  /** Drops the connection: the server sees a client disconnect. */
  abort(): void;
}

export interface SendOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send over a shared keep-alive agent instead of a fresh connection. @default false */
  keepAlive?: boolean;
}

/**
 * A tiny HTTP client on `node:http` for tests that need real disconnects: every request gets its
 * own socket (`agent: false`) unless `keepAlive` is asked for, so `abort()` closes exactly that
 * connection.
 */
export class HttpClient {
  private readonly open = new Set<http.ClientRequest>();
  private readonly keepAliveAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  /** `defaultHeaders` go with every request unless the request names the same header. */
  constructor(
    readonly baseUrl: string,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  send(path: string, options: SendOptions = {}): PendingRequest {
    const payload =
      options.body === undefined ? undefined : typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
    const headers: Record<string, string | number> = { ...this.defaultHeaders, ...options.headers };
    if (payload !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const request = http.request(new URL(path, this.baseUrl), { method: options.method ?? 'GET', agent: options.keepAlive ? this.keepAliveAgent : false, headers });
    this.open.add(request);
    let done = false;
    const result = new Promise<HttpResult>((resolve, reject) => {
      request.on('error', reject);
      request.on('close', () => this.open.delete(request));
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('aborted', () => reject(new Error('response aborted')));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          done = true;
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
      });
    });
    // an aborted request is expected to reject; nobody has to await it
    result.catch(() => undefined);
    request.end(payload);
    return { result, settled: () => done, abort: () => request.destroy() };
  }

  get(path: string, headers?: Record<string, string>): PendingRequest {
    return this.send(path, { headers });
  }

  /** Destroys every connection still open. */
  destroyAll(): void {
    for (const request of this.open) request.destroy();
    this.open.clear();
    this.keepAliveAgent.destroy();
  }
}

import * as http from 'node:http';

/** One message of an event stream. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * A reader of `text/event-stream` responses over its own socket, parsing messages as they arrive,
 * so a test can read part of a stream, drop the connection, and reconnect with `Last-Event-ID`.
 */
export class SseConnection {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  /** The raw body, for a response that is not a stream (an error answer). */
  text = '';
  private buffer = '';
  private endedFlag = false;
  private readonly waiters = new Set<() => void>();
  /** Settles when the server ends the response (or the connection drops). */
  readonly ended: Promise<void>;

  private constructor(
    private readonly request: http.ClientRequest,
    readonly response: http.IncomingMessage,
  ) {
    response.setEncoding('utf8');
    this.ended = new Promise<void>((resolve) => {
      const finish = () => {
        this.endedFlag = true;
        this.notify();
        resolve();
      };
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    response.on('data', (chunk: string) => this.receive(chunk));
  }

  /** Opens `path`; resolves once the response headers arrived. */
  static open(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<SseConnection> {
    return new Promise((resolve, reject) => {
      const request = http.request(new URL(path, baseUrl), { agent: false, headers: { accept: 'text/event-stream', ...headers } });
      request.on('error', reject);
      request.on('response', (response) => resolve(new SseConnection(request, response)));
      request.end();
    });
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  get isEnded(): boolean {
    return this.endedFlag;
  }

  /** The data of each message parsed as JSON. */
  items(): any[] {
    return this.messages.map((message) => JSON.parse(message.data));
  }

  /** The body parsed as JSON (an error answer). */
  async json(): Promise<any> {
    await this.ended;
    return JSON.parse(this.text);
  }

  /** Waits until `count` messages have arrived. */
  async waitForMessages(count: number, timeoutMs = 5000): Promise<SseMessage[]> {
    await this.waitUntil(() => this.messages.length >= count, timeoutMs, `${count} messages`);
    return this.messages.slice(0, count);
  }

  /** Drops the connection: the server sees the client go away. */
  close(): void {
    this.request.destroy();
  }

  private receive(chunk: string): void {
    this.text += chunk;
    this.buffer += chunk;
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.parse(block);
    }
    this.notify();
  }

  private parse(block: string): void {
    let id: string | undefined;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) this.messages.push({ id, event, data: data.join('\n') });
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once `condition` holds after a message (or at once); rejects naming `what` after `timeoutMs`. */
  waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (condition()) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve();
        } else if (this.endedFlag) {
          clearTimeout(timer);
          this.waiters.delete(check);
          reject(new Error(`stream ended before ${what} (had ${this.messages.length})`));
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what} (had ${this.messages.length})`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }
}

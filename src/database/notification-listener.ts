import type { Subscriber } from 'pg-listen';
import { DEDICATED_CONNECT_TIMEOUT_MS, dedicatedConnectionConfig } from './dedicated-connection';
import type { PgPool } from './postgres-pool';
import { DEFAULT_RECONNECT_BACKOFF, type ReconnectBackoff } from './instance-lock';

/** What a {@link NotificationListener} tells its owner. */
export interface NotificationHandlers {
  /** A notification on one of the channels; the payload as sent (text, possibly empty). */
  readonly notified: (channel: string, payload: string) => void;
  /**
   * The connection is back after a loss and LISTENs again. Notifications sent while it was down are
   * lost, so the owner re-reads what it waits for here.
   */
  readonly reconnected?: () => void;
}

/** Options of a {@link NotificationListener}. */
export interface NotificationListenerOptions {
  /** Channels to LISTEN on (plain identifiers). */
  readonly channels: readonly string[];
  /** Pause between reconnection attempts: doubling from `initialMs` up to `maxMs`. @default {initialMs: 100, maxMs: 5000} */
  readonly backoff?: ReconnectBackoff;
  /** Interval of the `SELECT` that finds a connection that silently stopped answering, in ms. @default 5000 */
  readonly livenessCheckMs?: number;
}

/**
 * LISTEN on a dedicated connection of `pool` (the pool's credentials and TLS), through `pg-listen`,
 * which reconnects with backoff, for ever, and LISTENs again on the new connection. `connected` is
 * false from the loss until then. A failure is never thrown at the owner after `start()`: it shows
 * as `connected: false` and, once back, as `reconnected()`.
 */
export class NotificationListener {
  private created: Subscriber | undefined = undefined;
  private isConnected = false;
  private started = false;
  private closed = false;
  /** Settles when a reconnection under way ends (connected or failed); undefined when none is. */
  private reconnection: { readonly settled: Promise<void>; readonly settle: () => void } | undefined = undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly options: NotificationListenerOptions,
    private readonly handlers: NotificationHandlers,
  ) {}

  /** Created on first use (at `start()`), so loading this file loads neither pg-listen nor pg. */
  private get subscriber(): Subscriber {
    return (this.created ??= this.createSubscriber());
  }

  private createSubscriber(): Subscriber {
    const { default: createPostgresSubscriber } = require('pg-listen') as typeof import('pg-listen');
    const { initialMs, maxMs } = this.options.backoff ?? DEFAULT_RECONNECT_BACKOFF;
    const identity = (text: string) => text;
    const subscriber = createPostgresSubscriber(dedicatedConnectionConfig(this.pool), {
      parse: identity,
      serialize: identity,
      // pg-listen's reconnection loop does not look at close(); a throw here is how it stops
      retryInterval: (attempt) => {
        if (this.closed) throw new Error('listener closed');
        return Math.min(maxMs, initialMs * 2 ** attempt);
      },
      retryLimit: Infinity,
      // 0 turns pg-listen's give-up timeout off: the listener lives as long as its owner
      retryTimeout: 0,
      paranoidChecking: this.options.livenessCheckMs ?? 5000,
    });
    const events = subscriber.events;
    events.on('notification', ({ channel, payload }) => this.handlers.notified(channel, typeof payload === 'string' ? payload : ''));
    events.on('reconnect', () => {
      this.isConnected = false;
      this.reconnection ??= settleable();
    });
    events.on('connected', () => {
      this.settleReconnection();
      // an attempt under way when close() ran connected anyway: pg-listen then holds a fresh client
      // (and its liveness interval) that its close() did not see, so it is closed again
      if (this.closed) {
        void subscriber.close().catch(() => undefined);
        return;
      }
      const wasStarted = this.started && !this.isConnected;
      this.isConnected = true;
      if (wasStarted) this.handlers.reconnected?.();
    });
    // without a listener an 'error' event would crash the process; losses are retried by pg-listen
    events.on('error', () => {
      this.isConnected = false;
      this.settleReconnection();
    });
    return subscriber;
  }

  /** True while the connection is up and LISTENs on every channel. */
  get connected(): boolean {
    return this.isConnected;
  }

  /** Connects and LISTENs; a failure rejects with the driver's error (the caller maps it). */
  async start(): Promise<void> {
    await this.subscriber.connect();
    for (const channel of this.options.channels) await this.subscriber.listenTo(channel);
    this.isConnected = true;
    this.started = true;
  }

  /**
   * Closes the connection; no reconnection follows. A reconnection attempt under way is waited for (at
   * most about one connect timeout) so that no connection or timer of this listener outlives the call.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.isConnected = false;
    this.started = false;
    await this.created?.close().catch(() => undefined);
    const reconnection = this.reconnection;
    if (reconnection === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 2 * DEDICATED_CONNECT_TIMEOUT_MS);
      timer.unref();
    });
    await Promise.race([reconnection.settled, bound]);
    clearTimeout(timer);
    await this.created?.close().catch(() => undefined);
  }

  private settleReconnection(): void {
    this.reconnection?.settle();
    this.reconnection = undefined;
  }
}

function settleable(): { readonly settled: Promise<void>; readonly settle: () => void } {
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  return { settled, settle };
}

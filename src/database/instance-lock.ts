import { createHash } from 'node:crypto';
import type { Clock } from '../shared/time/clock';
import { DeadlineTimer } from '../shared/time/deadline-timer';
import { within } from '../shared/time/timeout';
import type { DedicatedClient } from './postgres-pool';

/** The part of a `pg.Client` the instance lock uses. */
export type LockConnection = DedicatedClient;

/** Backoff of the reconnection after the lock connection is lost. */
export interface ReconnectBackoff {
  /** @default 100 */
  readonly initialMs: number;
  /** @default 5000 */
  readonly maxMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: ReconnectBackoff = Object.freeze({ initialMs: 100, maxMs: 5000 });

/** What an {@link InstanceLock} tells its holder about the lock. */
export type LockEvent =
  /** The lock connection is gone (or the lock was closed): other sessions now see the holder as dead. */
  | 'lost'
  /** No statement on the lock connection was confirmed for `graceMs`: the holder must act as dead too. */
  | 'lapsed'
  /** The lock was confirmed again after a loss or a lapse. */
  | 'confirmed';

/** Confirmation of the lock: a heartbeat on its connection and the grace after which an unconfirmed lock counts as lost. */
export interface LockConfirmationOptions {
  /** How long the lock counts as held after the last statement its connection answered was sent, in ms. */
  readonly graceMs: number;
  /** Interval of the `SELECT 1` heartbeat on the lock connection, in ms. @default graceMs / 4 */
  readonly heartbeatMs?: number;
  /**
   * Runs on the lock connection right after each acquisition (the first one and every retake), before
   * the lock counts as confirmed; a failure counts as a failed acquisition.
   */
  readonly onAcquired?: (client: LockConnection) => Promise<void>;
}

/**
 * Advisory-lock key of `id` in `namespace`: the first 8 bytes (signed, big-endian) of SHA-256 over
 * `<namespace>:<id>` (UTF-8), as a decimal string for a `bigint` parameter. SQL can recompute it as
 * `('x' || left(encode(sha256(convert_to('<namespace>:' || id, 'UTF8')), 'hex'), 16))::bit(64)::bigint`.
 */
export function advisoryLockKey(namespace: string, id: string): string {
  return createHash('sha256').update(`${namespace}:${id}`, 'utf8').digest().readBigInt64BE(0).toString();
}

/** SQL computing {@link advisoryLockKey} of `namespace` (a trusted constant) over the text expression `idSql`. */
export function advisoryLockKeySql(namespace: string, idSql: string): string {
  return `('x' || left(encode(sha256(convert_to('${namespace}:' || ${idSql}, 'UTF8')), 'hex'), 16))::bit(64)::bigint`;
}

/**
 * A session-level advisory lock that advertises its holder (a ledger instance, a single owner of a
 * service) as alive, held on a dedicated connection for the holder's lifetime. When that connection
 * errors or ends, the lock is gone: `held` turns false and the lock reconnects with backoff
 * (doubling up to the maximum) and retakes the same key, which can fail for a while until the
 * server has noticed the old session is gone. Other sessions probe it with
 * `pg_try_advisory_xact_lock_shared(key)`: success means the holder's session is gone.
 */
export class InstanceLock {
  private client: LockConnection | null = null;
  private isHeld = false;
  private closed = false;
  private timer: unknown = undefined;
  private delayMs: number;
  /** Monotonic time the last statement the lock connection answered was sent; `-Infinity` before any. */
  private confirmedAt = -Infinity;
  private isLapsed = false;
  private heartbeatTimer: unknown = undefined;
  /**
   * Reports the lapse by the clock. A `DeadlineTimer` because Node's timers count from the event loop's
   * cached time: one armed late in a long loop turn fires before `monotonicNow()` says the grace ran
   * out, and must try again rather than leave the lapse unreported.
   */
  private readonly lapseTimer: DeadlineTimer;
  private beating = false;
  private readonly listeners = new Set<(event: LockEvent) => void>();

  constructor(
    private readonly open: () => Promise<LockConnection>,
    private readonly key: string,
    private readonly clock: Clock,
    private readonly backoff: ReconnectBackoff = DEFAULT_RECONNECT_BACKOFF,
    private readonly confirmation?: LockConfirmationOptions,
  ) {
    this.delayMs = backoff.initialMs;
    this.lapseTimer = new DeadlineTimer(clock, () => this.checkConfirmed());
  }

  /**
   * True while the lock counts as held by its holder: held, and (with confirmation options) its
   * connection answered a statement sent less than `graceMs` ago. Pure: {@link checkConfirmed} acts on a lapse.
   */
  get confirmed(): boolean {
    if (!this.isHeld) return false;
    return this.confirmation === undefined || this.clock.monotonicNow() - this.confirmedAt <= this.confirmation.graceMs;
  }

  /**
   * Reports a lapse now if the grace has passed since the last confirmation (the lapse timer may not
   * have run yet: an event loop that stood still runs I/O callbacks before timers); returns `confirmed`.
   */
  checkConfirmed(): boolean {
    const overdue = this.confirmation !== undefined && this.clock.monotonicNow() - this.confirmedAt > this.confirmation.graceMs;
    // nothing was confirmed yet: nothing to revoke
    if (overdue && !this.isLapsed && this.confirmedAt !== -Infinity) this.lapse();
    return this.confirmed;
  }

  /** Listens to losses, lapses and confirmations; returns the function that stops listening. */
  onEvent(listener: (event: LockEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** True while the lock connection is up and holds the instance's advisory lock. */
  get held(): boolean {
    return this.isHeld;
  }

  /** The open lock connection (for the start-up check of its `synchronous_commit`), if any. */
  get connection(): LockConnection | null {
    return this.client;
  }

  /** Opens the dedicated connection; the caller retries failures. */
  async connect(): Promise<void> {
    this.client = await this.openWatched();
  }

  /** Takes the lock on the open connection: false when another live session holds it. */
  async acquire(): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    const sentAt = this.clock.monotonicNow();
    if (!(await tryLock(client, this.key))) return false;
    await this.confirmation?.onAcquired?.(client);
    this.isHeld = true;
    this.confirm(sentAt);
    this.armHeartbeat();
    return true;
  }

  /**
   * Whether the lock is held and its connection answers `SELECT 1` within `timeoutMs` (a connection
   * that silently stopped answering is not a live owner).
   */
  async ping(timeoutMs: number): Promise<boolean> {
    const client = this.client;
    if (!this.isHeld || !client) return false;
    return within(client.query('SELECT 1'), timeoutMs, this.clock).then(
      () => true,
      () => false,
    );
  }

  /** Stops reconnecting and closes the connection, which releases the lock on the server. */
  async close(): Promise<void> {
    const wasHeld = this.isHeld;
    this.closed = true;
    this.isHeld = false;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    // the lapse timer stays: a holder that goes on without its lock still revokes by its clock
    if (this.heartbeatTimer !== undefined) this.clock.clearTimer(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    if (wasHeld) this.emit('lost');
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async openWatched(): Promise<LockConnection> {
    const client = await this.open();
    const lost = () => this.lost(client);
    client.on('error', lost);
    client.on('end', lost);
    return client;
  }

  private lost(client: LockConnection): void {
    if (client !== this.client) return;
    const wasHeld = this.isHeld;
    this.client = null;
    this.isHeld = false;
    client.end().catch(() => undefined);
    if (this.heartbeatTimer !== undefined) this.clock.clearTimer(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    // before the first acquisition start-up owns the connection and reports the failure itself
    if (wasHeld && !this.closed) {
      this.schedule(this.backoff.initialMs);
      this.emit('lost');
    }
  }

  private schedule(delayMs: number): void {
    this.delayMs = delayMs;
    this.timer = this.clock.setTimer(() => void this.reconnect(), delayMs);
  }

  private async reconnect(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    let client: LockConnection | null = null;
    let locked = false;
    let sentAt = -Infinity;
    try {
      client = await this.openWatched();
      // tracked from here on, so a loss during the attempt is noticed (and not rescheduled twice)
      this.client = client;
      sentAt = this.clock.monotonicNow();
      locked = !this.closed && (await tryLock(client, this.key));
      if (locked && this.client === client && !this.closed) await this.confirmation?.onAcquired?.(client);
    } catch {
      locked = false;
    }
    if (locked && this.client === client && !this.closed) {
      this.isHeld = true;
      this.confirm(sentAt);
      this.armHeartbeat();
      return;
    }
    if (this.client === client) this.client = null;
    await client?.end().catch(() => undefined);
    if (!this.closed) this.schedule(Math.min(this.delayMs * 2, this.backoff.maxMs));
  }

  /**
   * The lock answered a statement sent at `sentAt`. A confirmation that arrives after the grace ran out
   * reports the lapse first: the holder revokes what it held, even if the lapse timer has not run yet.
   */
  private confirm(sentAt: number): void {
    if (this.confirmation === undefined || sentAt <= this.confirmedAt) return;
    this.checkConfirmed();
    this.confirmedAt = sentAt;
    // a lapse is strictly more than the grace since the confirmation
    this.lapseTimer.arm(sentAt + this.confirmation.graceMs + 1);
    if (this.isLapsed) {
      this.isLapsed = false;
      this.emit('confirmed');
    }
  }

  private lapse(): void {
    this.isLapsed = true;
    this.emit('lapsed');
  }

  private armHeartbeat(): void {
    const confirmation = this.confirmation;
    if (confirmation === undefined || this.heartbeatTimer !== undefined || this.closed) return;
    const everyMs = confirmation.heartbeatMs ?? Math.max(1, Math.floor(confirmation.graceMs / 4));
    this.heartbeatTimer = this.clock.setTimer(() => {
      this.heartbeatTimer = undefined;
      void this.beat();
      if (this.isHeld) this.armHeartbeat();
    }, everyMs);
  }

  /** One `SELECT 1` on the lock connection; skipped while the previous one has not answered. */
  private async beat(): Promise<void> {
    const client = this.client;
    if (this.beating || !this.isHeld || client === null) return;
    this.beating = true;
    const sentAt = this.clock.monotonicNow();
    try {
      await client.query('SELECT 1');
      if (client === this.client && this.isHeld) this.confirm(sentAt);
    } catch {
      // a failed heartbeat confirms nothing; a lost connection reports itself through 'error'/'end'
    } finally {
      this.beating = false;
    }
  }

  private emit(event: LockEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }
}

async function tryLock(client: LockConnection, key: string): Promise<boolean> {
  const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]);
  return rows[0]?.locked === true;
}

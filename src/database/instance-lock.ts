import { createHash } from 'node:crypto';
import type { Clock } from '../shared/time/clock';
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

  constructor(
    private readonly open: () => Promise<LockConnection>,
    private readonly key: string,
    private readonly clock: Clock,
    private readonly backoff: ReconnectBackoff = DEFAULT_RECONNECT_BACKOFF,
  ) {
    this.delayMs = backoff.initialMs;
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
    this.isHeld = await tryLock(client, this.key);
    return this.isHeld;
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
    this.closed = true;
    this.isHeld = false;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
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
    // before the first acquisition start-up owns the connection and reports the failure itself
    if (wasHeld && !this.closed) this.schedule(this.backoff.initialMs);
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
    try {
      client = await this.openWatched();
      // tracked from here on, so a loss during the attempt is noticed (and not rescheduled twice)
      this.client = client;
      locked = !this.closed && (await tryLock(client, this.key));
    } catch {
      locked = false;
    }
    if (locked && this.client === client && !this.closed) {
      this.isHeld = true;
      return;
    }
    if (this.client === client) this.client = null;
    await client?.end().catch(() => undefined);
    if (!this.closed) this.schedule(Math.min(this.delayMs * 2, this.backoff.maxMs));
  }
}

async function tryLock(client: LockConnection, key: string): Promise<boolean> {
  const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]);
  return rows[0]?.locked === true;
}

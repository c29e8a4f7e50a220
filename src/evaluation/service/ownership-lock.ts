import { advisoryLockKey } from '../../database/instance-lock';
import type { DedicatedClient } from '../../database/postgres-pool';
import type { Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';

/** Namespace of the ownership lock keys: SHA-256 over `agent_runtime.eval_store:` + the identity's canonical JSON. */
const LOCK_NAMESPACE = 'agent_runtime.eval_store';

/** The advisory-lock key of one store identity (its canonical JSON), as a decimal `bigint` string. */
export function ownershipLockKey(identity: string): string {
  return advisoryLockKey(LOCK_NAMESPACE, identity);
}

/**
 * The session advisory locks that make a service the single owner of a store identity (spec 05
 * §2.4), held on one dedicated connection for the service's life. Every key is taken, or none:
 * a partial acquisition is undone. Unlike the ledger's instance lock it never reconnects on its
 * own: a lost connection ends ownership, and `onLost` tells the owner once.
 */
export class OwnershipLock {
  #held = false;
  #closed = false;
  #lostListener: (() => void) | null = null;

  constructor(
    private readonly connection: DedicatedClient,
    private readonly keys: readonly string[],
  ) {
    const lost = () => this.lost();
    connection.on('error', lost);
    connection.on('end', lost);
  }

  /** True while every key is held and the connection is up. */
  get held(): boolean {
    return this.#held;
  }

  /** False once the connection was lost or closed: a new lock needs a new connection. */
  get open(): boolean {
    return !this.#closed;
  }

  /** False when another session holds one of the keys (nothing is kept then). */
  async tryAcquire(): Promise<boolean> {
    const taken: string[] = [];
    for (const key of this.keys) {
      const { rows } = await this.connection.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]);
      if (rows[0]?.locked !== true) {
        for (const held of taken) await this.connection.query('SELECT pg_advisory_unlock($1::bigint)', [held]);
        return false;
      }
      taken.push(key);
    }
    this.#held = !this.#closed;
    return this.#held;
  }

  /** Called once when the connection holding the locks is lost. */
  onLost(listener: () => void): void {
    this.#lostListener = listener;
  }

  /** Whether the locks are held and their connection answers `SELECT 1` within `timeoutMs`. */
  async ping(timeoutMs: number, clock: Clock): Promise<boolean> {
    if (!this.#held) return false;
    return within(this.connection.query('SELECT 1'), timeoutMs, clock).then(
      () => this.#held,
      () => false,
    );
  }

  /** Closes the connection, which releases the locks on the server. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#held = false;
    this.#lostListener = null;
    await this.connection.end().catch(() => undefined);
  }

  private lost(): void {
    if (this.#closed) return;
    const wasHeld = this.#held;
    this.#held = false;
    this.#closed = true;
    this.connection.end().catch(() => undefined);
    const listener = this.#lostListener;
    this.#lostListener = null;
    if (wasHeld) listener?.();
  }
}

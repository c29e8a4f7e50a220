import type { DedicatedClient } from '../../database/postgres-pool';
import type { Clock } from '../../shared/time/clock';
import { EvalServiceError } from '../eval.errors';
import type { EvalIdentitySource, EvalStore, EvalStoreIdentity } from '../eval.types';
import { OwnershipLock, ownershipLockKey } from './ownership-lock';

/** Standby retries of the lock: 1 s, doubling to 30 s (spec 05 §3). */
const STANDBY_FIRST_RETRY_MS = 1000;
const STANDBY_MAX_RETRY_MS = 30_000;

/** What the session tells its service. */
export interface OwnershipEvents {
  /** The lock was won in standby: run start-up steps 3–7 (a rejection stops the service). */
  takeOver(): Promise<void>;
  /** Takeover failed with this code: the service stops. */
  failed(reason: string): void;
  /** The connection holding the locks was lost while owning. */
  lost(): void;
}

/**
 * The ownership of a store identity (spec 05 §2.4, §3): a dedicated connection, the identity read on
 * it, every lock key of that identity, the standby retries, and the checks that need the connection
 * (identity through the pool, schema). Standby reads the identity table only.
 */
export class EvalOwnershipSession {
  #connection: DedicatedClient | null = null;
  #lock: OwnershipLock | null = null;
  #identity: EvalStoreIdentity | null = null;
  #timer: unknown = undefined;
  #delayMs = STANDBY_FIRST_RETRY_MS;
  #closed = false;

  constructor(
    private readonly store: EvalStore,
    private readonly clock: Clock,
    private readonly events: OwnershipEvents,
  ) {}

  /** The backend identity source in use, once read. */
  get identitySource(): EvalIdentitySource | null {
    return this.#identity?.identity_source ?? null;
  }

  /** Opens the dedicated connection, reads the identity on it and tries its locks: false when held elsewhere. */
  async open(): Promise<boolean> {
    const connection = await this.store.openDedicatedConnection();
    if (this.#closed) {
      await connection.end().catch(() => undefined);
      return false;
    }
    this.#connection = connection;
    const identity = await this.store.ownershipIdentity(connection);
    this.#identity = identity;
    const lock = new OwnershipLock(connection, identity.identities.map(ownershipLockKey));
    this.#lock = lock;
    const won = await lock.tryAcquire();
    if (won) lock.onLost(() => this.events.lost());
    return won;
  }

  /** Retries the lock with backoff until it is won (then `takeOver`) or the session closes. */
  retryInStandby(): void {
    if (this.#closed) return;
    this.#timer = this.clock.setTimer(() => void this.#retry(), this.#delayMs);
  }

  /** Step 3: the identity read through the pool must equal the lock connection's. */
  async recheckIdentity(): Promise<void> {
    const pooled = await this.store.ownershipIdentity();
    const held = this.#identity;
    if (held === null || pooled.identity_source !== held.identity_source || pooled.identities.join('\n') !== held.identities.join('\n')) {
      throw new EvalServiceError('eval_store_identity_changed_during_init');
    }
  }

  /** Step 4: the tables, validated with the lock connection among the checked connections. */
  async assertSchema(): Promise<void> {
    if (this.#connection === null) throw new EvalServiceError('eval_store_identity_unavailable');
    await this.store.assertSchema(this.#connection);
  }

  /** Whether the locks are held and their connection answers within `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean> {
    return this.#lock?.ping(timeoutMs, this.clock) ?? Promise.resolve(false);
  }

  /** Ends the retries and closes the connection, which releases the locks. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await this.#drop();
  }

  async #retry(): Promise<void> {
    this.#timer = undefined;
    if (this.#closed) return;
    let won = false;
    try {
      if (this.#lock === null || this.#connection === null || !this.#isOpen()) {
        await this.#drop();
        won = await this.open();
      } else {
        won = await this.#lock.tryAcquire();
        if (won) this.#lock.onLost(() => this.events.lost());
      }
    } catch {
      // a lost or refused connection is reopened at the next retry
      await this.#drop();
    }
    if (this.#closed) return;
    if (!won) {
      this.#delayMs = Math.min(this.#delayMs * 2, STANDBY_MAX_RETRY_MS);
      this.retryInStandby();
      return;
    }
    try {
      await this.events.takeOver();
    } catch (error) {
      this.events.failed(EvalServiceError.isEvalServiceError(error) ? error.code : 'eval_store_unavailable');
    }
  }

  #isOpen(): boolean {
    return this.#lock?.open ?? false;
  }

  async #drop(): Promise<void> {
    const lock = this.#lock;
    const connection = this.#connection;
    this.#lock = null;
    this.#connection = null;
    if (lock !== null) await lock.close();
    else await connection?.end().catch(() => undefined);
  }
}

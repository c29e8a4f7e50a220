import type { DataSource } from 'typeorm';
import type { InstanceLock, ReconnectBackoff } from '../database/instance-lock';
import { poolOf, type PgPool } from '../database/postgres-pool';
import type { Clock } from '../shared/time/clock';
import { within } from '../shared/time/timeout';
import { emitSafely, type TelemetrySink } from '../telemetry/telemetry-sink';
import type { ClaimResult, InvocationPhase, InvocationRecord } from './invocation-record';
import type { LedgerState, LedgerStatus } from './invocation-ledger.types';
import { ledgerStatement } from './storage/ledger-connection';
import type { ResolvedLedgerOptions } from './ledger-options';
import type { LedgerStatements } from './storage/ledger-sql';
import { openLedgerInstance } from './storage/ledger-startup';
import { LEDGER_OPERATION_EVENT, type LedgerOperationEvent } from './ledger.constants';
import { LedgerError, type LedgerOperation } from './ledger.errors';

/** Time allowed to in-flight operations when the ledger closes. */
export const CLOSE_GRACE_MS = 5000;

/** What an operation of a started ledger runs on. */
export type LedgerOperationBody<T> = (pool: PgPool, statements: LedgerStatements, settings: ResolvedLedgerOptions) => Promise<T>;

/** Collaborators of a {@link LedgerLifecycle}. */
export interface LedgerLifecycleDeps {
  readonly clock: Clock;
  readonly events: TelemetrySink | undefined;
  readonly backoff: ReconnectBackoff;
}

/**
 * The lifecycle of one ledger instance (spec 04 §8): `new` → `starting` → `started` → `closing` →
 * `closed`, the operations in flight (counted, so `close` can give them a grace period), the
 * telemetry of every operation, and health. Options that failed validation are held as the error
 * `start()` rejects with, so construction never throws.
 */
export class LedgerLifecycle {
  private state: LedgerState = 'new';
  private pool: PgPool | null = null;
  private statements: LedgerStatements | null = null;
  private lock: InstanceLock | null = null;
  private starting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private inFlight = 0;
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: ResolvedLedgerOptions | LedgerError,
    private readonly deps: LedgerLifecycleDeps,
  ) {}

  /** True while this instance holds its instance lock, i.e. other instances see it as alive. */
  get lockHeld(): boolean {
    return this.lock?.held ?? false;
  }

  status(): LedgerStatus {
    return Object.freeze({ state: this.state, lock_held: this.lockHeld });
  }

  /** Validates the options and the schema, opens the lock connection and takes the instance lock; a failed start may be retried. */
  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new LedgerError('invalid_ledger_handle'));
    this.state = 'starting';
    this.starting = this.startOnce().then(
      () => {
        this.state = 'started';
      },
      (error: unknown) => {
        this.state = 'new';
        throw error;
      },
    );
    return this.starting;
  }

  /** Refuses new operations, waits up to {@link CLOSE_GRACE_MS} for those in flight, then closes the lock connection. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** True when started, holding the instance lock, and both the pool and the lock connection answer `SELECT 1` within `timeoutMs`. */
  async isHealthy(timeoutMs: number): Promise<boolean> {
    const pool = this.pool;
    const lock = this.lock;
    if (this.state !== 'started' || !pool || !lock?.held) return false;
    const [poolAnswers, lockAnswers] = await Promise.all([
      within(ledgerStatement(pool, 'SELECT 1', []), timeoutMs, this.deps.clock).then(
        () => true,
        () => false,
      ),
      lock.ping(timeoutMs),
    ]);
    return poolAnswers && lockAnswers && lock.held;
  }

  /** Runs an operation of a started ledger, counting it in flight and reporting it to telemetry; `invalid_ledger_handle` otherwise. */
  async operate<T>(operation: LedgerOperation, body: LedgerOperationBody<T>): Promise<T> {
    const startedAt = this.deps.clock.monotonicNow();
    const { pool, statements, settings } = this;
    if (this.state !== 'started' || !pool || !statements || LedgerError.isLedgerError(settings)) {
      const error = new LedgerError('invalid_ledger_handle');
      this.report(operation, error.code, startedAt, null);
      throw error;
    }
    this.inFlight += 1;
    try {
      const result = await body(pool, statements, settings);
      this.report(operation, 'ok', startedAt, phaseOf(result));
      return result;
    } catch (error) {
      const failure = LedgerError.isLedgerError(error) ? error : new LedgerError('ledger_unavailable');
      this.report(operation, failure.code, startedAt, null);
      throw failure;
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0 && this.onIdle) {
        const onIdle = this.onIdle;
        this.onIdle = null;
        onIdle();
      }
    }
  }

  private async startOnce(): Promise<void> {
    const settings = this.settings;
    if (LedgerError.isLedgerError(settings)) throw settings;
    const pool = poolOf(this.dataSource);
    if (!pool) throw new LedgerError('invalid_ledger_options', { field: 'dataSource' });
    const opened = await openLedgerInstance(this.dataSource, pool, settings, this.deps.clock, this.deps.backoff);
    this.pool = pool;
    this.statements = opened.statements;
    this.lock = opened.lock;
  }

  private async shutdown(): Promise<void> {
    if (this.state === 'starting') await this.starting?.catch(() => undefined);
    this.state = 'closing';
    await this.settled(CLOSE_GRACE_MS);
    await this.lock?.close();
    this.state = 'closed';
  }

  private settled(graceMs: number): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const clock = this.deps.clock;
      const timer = clock.setTimer(done, graceMs);
      this.onIdle = done;
      function done(): void {
        clock.clearTimer(timer);
        resolve();
      }
    });
  }

  private report(operation: LedgerOperation, outcome: LedgerOperationEvent['outcome'], startedAt: number, phase: InvocationPhase | null): void {
    const events = this.deps.events;
    if (!events) return;
    const event: LedgerOperationEvent = Object.freeze({ operation, outcome, duration_ms: this.deps.clock.monotonicNow() - startedAt, phase });
    emitSafely(events, LEDGER_OPERATION_EVENT, event);
  }
}

function phaseOf(result: unknown): InvocationPhase | null {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return null;
  const record = 'invocation' in result ? (result as ClaimResult).invocation : (result as InvocationRecord);
  return record.phase ?? null;
}

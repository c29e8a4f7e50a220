import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DEFAULT_RECONNECT_BACKOFF } from '../database/instance-lock';
import { systemClock } from '../shared/time/clock';
import type { ClaimOptions, ExpiredOptions, InvocationLedgerDeps, InvocationMetadata, LeaseOptions, LedgerStatus, NowOption } from './invocation-ledger.types';
import { TERMINAL_PHASES, toInvocationRecord, type ClaimResult, type InvocationRecord, type InvocationRow, type TerminalPhase } from './invocation-record';
import { callOptions, expiredLimit, explicitNow, invocationId, jsonDocument, leaseMs, newRow, ownerToken, projectedOutcome } from './ledger-arguments';
import { ledgerStatement as runStatement } from './storage/ledger-connection';
import { LedgerLifecycle, type LedgerOperationBody } from './ledger-lifecycle';
import { resolveLedgerOptions, type InvocationLedgerOptions, type ResolvedLedgerOptions } from './ledger-options';
import type { Verdict } from './storage/ledger-sql';
import { LEASE_EXPIRED_OUTCOME } from './ledger.constants';
import { LedgerError, type LedgerOperation } from './ledger.errors';
import { REASON_CODE } from './outcome-projection';

export type { ClaimOptions, ExpiredOptions, InvocationLedgerDeps, InvocationMetadata, LeaseOptions, LedgerState, LedgerStatus, NowOption } from './invocation-ledger.types';

/**
 * The durable invocation ledger (spec 04 §5): one row per invocation, a fenced lease that lets
 * exactly one owner write it, and checkpoints to resume from. Every operation is one SQL statement
 * that locks the row before deciding. Framework-free; `LedgerModule` wraps it for Nest.
 *
 * @example
 * const ledger = new InvocationLedger(dataSource, { instanceId: 'worker-1' });
 * await ledger.start();
 * await ledger.create('inv-1', { workflowId: 'helper', workflowVersion: '1', kind: 'agent_run' }, null);
 * const { ownerToken } = await ledger.claim('inv-1', { leaseMs: 30_000 });
 * await ledger.checkpoint('inv-1', ownerToken, { completed_steps: [] }, { leaseMs: 30_000 });
 * await ledger.finish('inv-1', ownerToken, 'completed', { answer: 42 }, undefined);
 */
export class InvocationLedger {
  private readonly id: string;
  private readonly settings: ResolvedLedgerOptions | LedgerError;
  private readonly lifecycle: LedgerLifecycle;

  constructor(dataSource: DataSource, options?: InvocationLedgerOptions, deps: InvocationLedgerDeps = {}) {
    let settings: ResolvedLedgerOptions | LedgerError;
    try {
      settings = resolveLedgerOptions(options);
    } catch (error) {
      settings = error as LedgerError;
    }
    this.settings = settings;
    this.id = LedgerError.isLedgerError(settings) ? randomUUID() : settings.instanceId;
    this.lifecycle = new LedgerLifecycle(dataSource, settings, {
      clock: deps.clock ?? systemClock,
      events: deps.events,
      backoff: deps.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF,
    });
  }

  /** Id of this instance (option `instanceId`, default a random UUID); the owner id on its claims. */
  get instanceId(): string {
    return this.id;
  }

  /** Lease the Runner integration uses (option `defaultLeaseMs`). */
  get defaultLeaseMs(): number {
    return LedgerError.isLedgerError(this.settings) ? 30_000 : this.settings.defaultLeaseMs;
  }

  /** True while this instance holds its instance lock, i.e. other instances see it as alive. */
  get lockHeld(): boolean {
    return this.lifecycle.lockHeld;
  }

  status(): LedgerStatus {
    return this.lifecycle.status();
  }

  /**
   * Validates the options and the schema (`schema_mismatch` listing every difference), opens the
   * lock connection and takes the instance lock (`ledger_instance_id_in_use` when another live
   * instance holds it). An unreachable database fails with `ledger_unavailable` after
   * `connectRetries` retries. A failed start leaves the ledger unstarted; it may be started again.
   */
  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /**
   * Refuses new operations (`invalid_ledger_handle`), waits up to 5 s for those in flight, then
   * closes the lock connection, which makes this instance's running invocations claimable by other
   * instances at once. Idempotent.
   */
  close(): Promise<void> {
    return this.lifecycle.close();
  }

  /** Inserts a new invocation in phase `ready`, revision 0 (`already_exists` if the id is taken). */
  create(id: string, metadata: InvocationMetadata, checkpoint: unknown, options?: NowOption): Promise<InvocationRecord> {
    return this.operate('create', async (pool, sql, settings) => {
      const row = newRow('create', id, metadata, checkpoint, settings.maxDocumentBytes);
      const now = explicitNow('create', callOptions('create', options, ['now']).now);
      const rows = await runStatement(pool, sql.create, [...row, now]);
      if (rows.length === 0) throw new LedgerError('already_exists');
      return toInvocationRecord(rows[0] as unknown as InvocationRow);
    });
  }

  /**
   * `create` and `claim` in one statement: inserts the invocation already `running` under a new
   * claim (revision 1, as after create then claim), so no failure between the two can leave a row
   * created and never claimed. `already_exists` if the id is taken; `ledger_unavailable` while the
   * instance lock is not held. The token is returned here and nowhere else.
   */
  createAndClaim(id: string, metadata: InvocationMetadata, checkpoint: unknown, options: ClaimOptions): Promise<ClaimResult> {
    return this.operate('create_and_claim', async (pool, sql, settings) => {
      const row = newRow('create_and_claim', id, metadata, checkpoint, settings.maxDocumentBytes);
      const o = callOptions('create_and_claim', options, ['ownerToken', 'leaseMs', 'now']);
      const lease = leaseMs('create_and_claim', o.leaseMs);
      const token = o.ownerToken === undefined ? randomUUID() : ownerToken('create_and_claim', o.ownerToken, 'ownerToken');
      const now = explicitNow('create_and_claim', o.now, lease);
      if (!this.lockHeld) throw new LedgerError('ledger_unavailable', { reason: 'instance_lock_not_held' });
      const rows = await runStatement(pool, sql.createAndClaim, [...row, now, token, this.instanceId, lease]);
      if (rows.length === 0) throw new LedgerError('already_exists');
      return Object.freeze({ ownerToken: token, invocation: toInvocationRecord(rows[0] as unknown as InvocationRow) });
    });
  }

  /**
   * Takes ownership: phase `running`, a new fencing token, `lease_until_ms = now + leaseMs`. A
   * running row is refused (`invocation_owned`) until its lease ends, unless its owner instance is
   * dead; `completed` is refused for good. The token is returned here and nowhere else.
   */
  claim(id: string, options: ClaimOptions): Promise<ClaimResult> {
    return this.operate('claim', async (pool, sql) => {
      const key = invocationId('claim', id);
      const o = callOptions('claim', options, ['ownerToken', 'leaseMs', 'now']);
      const lease = leaseMs('claim', o.leaseMs);
      const token = o.ownerToken === undefined ? randomUUID() : ownerToken('claim', o.ownerToken, 'ownerToken');
      const now = explicitNow('claim', o.now, lease);
      if (!this.lockHeld) throw new LedgerError('ledger_unavailable', { reason: 'instance_lock_not_held' });
      const invocation = decided(await runStatement(pool, sql.claim, [key, token, this.instanceId, now, lease]));
      return Object.freeze({ ownerToken: token, invocation });
    });
  }

  /** Fenced: extends the lease to `now + leaseMs`. */
  renew(id: string, token: string, options: LeaseOptions): Promise<InvocationRecord> {
    return this.operate('renew', async (pool, sql) => {
      const key = invocationId('renew', id);
      const fence = ownerToken('renew', token);
      const o = callOptions('renew', options, ['leaseMs', 'now']);
      const lease = leaseMs('renew', o.leaseMs);
      const now = explicitNow('renew', o.now, lease);
      return decided(await runStatement(pool, sql.renew, [key, fence, now, lease]));
    });
  }

  /** Fenced: stores the checkpoint and extends the lease as `renew` does; the phase stays `running`. */
  checkpoint(id: string, token: string, checkpoint: unknown, options: LeaseOptions): Promise<InvocationRecord> {
    return this.operate('checkpoint', async (pool, sql, settings) => {
      const key = invocationId('checkpoint', id);
      const fence = ownerToken('checkpoint', token);
      const o = callOptions('checkpoint', options, ['leaseMs', 'now']);
      const lease = leaseMs('checkpoint', o.leaseMs);
      const now = explicitNow('checkpoint', o.now, lease);
      const json = jsonDocument('checkpoint', 'checkpoint', checkpoint, settings.maxDocumentBytes);
      return decided(await runStatement(pool, sql.checkpoint, [key, fence, now, lease, json]));
    });
  }

  /**
   * Fenced: ends the claim with a terminal phase (`completed`, `failed`, `timed_out`, `cancelled`,
   * `paused`), stores the outcome (projected by `sanitizeTerminalOutcome` for `failed` and
   * `cancelled`) and the checkpoint (`undefined` keeps the current one); token, owner and lease clear.
   */
  finish(id: string, token: string, phase: TerminalPhase, outcome: unknown, checkpoint: unknown, options?: NowOption): Promise<InvocationRecord> {
    return this.operate('finish', async (pool, sql, settings) => {
      const key = invocationId('finish', id);
      const fence = ownerToken('finish', token);
      if (!(TERMINAL_PHASES as readonly unknown[]).includes(phase)) {
        throw new LedgerError('invalid_terminal_phase', { phase: typeof phase === 'string' && REASON_CODE.test(phase) ? phase : null });
      }
      const now = explicitNow('finish', callOptions('finish', options, ['now']).now);
      const stored = phase === 'failed' || phase === 'cancelled' ? projectedOutcome(settings.sanitizeTerminalOutcome, phase, outcome) : outcome;
      const outcomeJson = stored === undefined ? null : jsonDocument('finish', 'outcome', stored, settings.maxDocumentBytes);
      const checkpointJson = checkpoint === undefined ? null : jsonDocument('finish', 'checkpoint', checkpoint, settings.maxDocumentBytes);
      return decided(await runStatement(pool, sql.finish, [key, fence, now, phase, outcomeJson, checkpointJson]));
    });
  }

  /**
   * Removes the invocation unless it is actively owned (running, lease not ended, owner alive):
   * `invocation_owned` then. Resolves `false` when there was no row (idempotent).
   */
  delete(id: string, options?: NowOption): Promise<boolean> {
    return this.operate('delete', async (pool, sql) => {
      const key = invocationId('delete', id);
      const now = explicitNow('delete', callOptions('delete', options, ['now']).now);
      const [row] = await runStatement(pool, sql.delete, [key, this.instanceId, now]);
      if (!row) return false;
      if (row.verdict !== 'ok') throw new LedgerError('invocation_owned');
      return true;
    });
  }

  /** The record of an invocation, or `null`. */
  get(id: string): Promise<InvocationRecord | null> {
    return this.operate('get', async (pool, sql) => {
      const [row] = await runStatement(pool, sql.get, [invocationId('get', id)]);
      return row ? toInvocationRecord(row as unknown as InvocationRow) : null;
    });
  }

  /**
   * Running invocations whose lease has ended (`now >= lease_until_ms`) and that no owner has
   * finished or renewed: at most `limit` (1..1000, default 100), oldest lease first. Read only;
   * what it lists may be claimed or recovered by the time the caller acts.
   */
  listExpired(options?: ExpiredOptions): Promise<readonly InvocationRecord[]> {
    return this.operate('list_expired', async (pool, sql) => {
      const o = callOptions('list_expired', options, ['limit', 'now']);
      const limit = expiredLimit('list_expired', o.limit);
      const now = explicitNow('list_expired', o.now);
      const rows = await runStatement(pool, sql.listExpired, [limit, now]);
      return Object.freeze(rows.map((row) => toInvocationRecord(row as unknown as InvocationRow)));
    });
  }

  /**
   * Ends up to `limit` (1..1000, default 100) running invocations whose lease has ended without
   * their owner: phase `failed`, outcome `{reason: 'lease_expired'}`, token, owner and lease
   * cleared, revision + 1, in one statement and without a token. It touches only rows that are
   * still running with an ended lease when it locks them (on the database clock, or `now`), so an
   * owner that renewed in time is never touched, and it skips rows another statement holds. The
   * former owner's next fenced write gets `stale_owner`. Resolves the ids of the recovered rows.
   */
  recoverExpired(options?: ExpiredOptions): Promise<readonly string[]> {
    return this.operate('recover_expired', async (pool, sql) => {
      const o = callOptions('recover_expired', options, ['limit', 'now']);
      const limit = expiredLimit('recover_expired', o.limit);
      const now = explicitNow('recover_expired', o.now);
      const rows = await runStatement(pool, sql.recoverExpired, [limit, now, JSON.stringify(LEASE_EXPIRED_OUTCOME)]);
      return Object.freeze(rows.map((row) => row.id as string));
    });
  }

  /**
   * True when the ledger is started, holds its instance lock, and both the pool and the lock
   * connection answer `SELECT 1` within `timeoutMs`.
   */
  isHealthy(timeoutMs = 1000): Promise<boolean> {
    return this.lifecycle.isHealthy(timeoutMs);
  }

  private operate<T>(operation: LedgerOperation, body: LedgerOperationBody<T>): Promise<T> {
    return this.lifecycle.operate(operation, body);
  }
}

/** The record of a deciding statement's row, or the code it was refused with. */
function decided(rows: Array<Record<string, unknown>>): InvocationRecord {
  const [row] = rows;
  if (!row) throw new LedgerError('not_found');
  const verdict = row.verdict as Verdict;
  if (verdict !== 'ok') throw new LedgerError(verdict);
  return toInvocationRecord(row as unknown as InvocationRow);
}

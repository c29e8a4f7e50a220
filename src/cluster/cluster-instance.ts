import { hostname } from 'node:os';
import type { DataSource } from 'typeorm';
import { dedicatedConnectionOpener } from '../database/dedicated-connection';
import { advisoryLockKey, advisoryLockKeySql, InstanceLock, type LockConnection, type LockEvent, type ReconnectBackoff } from '../database/instance-lock';
import { classifyFailure, type PostgresFailure } from '../database/postgres-failure';
import { poolOf, type PgPool } from '../database/postgres-pool';
import { runStatement } from '../database/statement-runner';
import { systemClock, type Clock } from '../shared/time/clock';
import { isValidId } from '../shared/ids/id-rule';
import { randomId } from '../shared/ids/random-id';
import { ClusterError } from './cluster.errors';

/** Namespace of the cluster instances' advisory locks. */
export const CLUSTER_INSTANCE_LOCK_NAMESPACE = 'agent_runtime.cluster.instance';

/** SQL giving the lock key of the instance id in the text expression `idSql`. */
export const clusterInstanceKeySql = (idSql: string): string => advisoryLockKeySql(CLUSTER_INSTANCE_LOCK_NAMESPACE, idSql);

/**
 * SQL that is true when the instance in `idSql` is dead: its lock is free, so the shared probe
 * lock (held to the end of the transaction) is granted. It conflicts with the owner's exclusive
 * session lock only, so two instances probing the same dead one do not see each other as live.
 */
export const instanceIsDeadSql = (idSql: string): string => `pg_try_advisory_xact_lock_shared(${clusterInstanceKeySql(idSql)})`;

/** Options of a {@link ClusterInstance}. */
export interface ClusterInstanceOptions {
  /** An initialised TypeORM Postgres DataSource; the instance uses its pool and one dedicated connection. */
  readonly dataSource: DataSource;
  /** This instance's id: 1..128 characters without control characters. @default hostname + pid + a random suffix */
  readonly instanceId?: string;
  /** Clock of the lock's reconnection. @default systemClock */
  readonly clock?: Clock;
  /** Reconnection backoff of the lock connection. @default {initialMs: 100, maxMs: 5000} */
  readonly backoff?: ReconnectBackoff;
  /**
   * How long the instance counts as live after its lock connection last answered (a heartbeat every
   * quarter of it), in ms (1..3,600,000). Past it the instance acts as dead: cluster admission revokes
   * its permits (`owner_down`) by this clock, without the database. @default 2000
   */
  readonly lockGraceMs?: number;
  /**
   * What peers wait beyond `lockGraceMs` before they reuse the capacity of this instance once it is
   * dead (timer latency, clock rates), in ms (0..3,600,000). @default 1000
   */
  readonly lockGraceMarginMs?: number;
}

/** Default of {@link ClusterInstanceOptions.lockGraceMs}. */
export const DEFAULT_LOCK_GRACE_MS = 2000;
/** Default of {@link ClusterInstanceOptions.lockGraceMarginMs}. */
export const DEFAULT_LOCK_GRACE_MARGIN_MS = 1000;

/**
 * Registers the instance on its lock connection right after each acquisition: how long peers must
 * wait after seeing it dead ($2), and no "first seen dead" any more (a peer may have written one
 * while the lock was free).
 */
const REGISTER = `INSERT INTO agent_runtime_cluster_instances (instance_id, reap_after_ms) VALUES ($1, $2)
ON CONFLICT (instance_id) DO UPDATE SET joined_at = clock_timestamp(), reap_after_ms = EXCLUDED.reap_after_ms, dead_since = NULL`;

/**
 * One instance of a cluster (spec 08 §2): its id, its row in `agent_runtime_cluster_instances`,
 * and the kernel's instance lock held on a dedicated connection, which makes it live. Cluster
 * admission and the Postgres run store of one process share one of these.
 */
export class ClusterInstance {
  readonly instanceId: string;
  /** The DataSource the instance was built on (its schema checks use it). */
  readonly dataSource: DataSource;
  readonly pool: PgPool;
  /** How long the instance counts as live after its lock last answered, in ms. */
  readonly lockGraceMs: number;
  /** Grace plus margin: how long peers wait after first seeing this instance dead before they reap its rows. */
  readonly reapAfterMs: number;

  private readonly lock: InstanceLock;
  private readonly components = new Map<string, () => boolean>();
  private started = false;

  constructor(options: ClusterInstanceOptions) {
    const pool = poolOf(options?.dataSource);
    if (!pool) throw new ClusterError('invalid_cluster_options', { field: 'dataSource' });
    const instanceId = options.instanceId ?? defaultInstanceId();
    if (!isValidId(instanceId, 128)) throw new ClusterError('invalid_cluster_options', { field: 'instanceId' });
    this.instanceId = instanceId;
    this.dataSource = options.dataSource;
    this.pool = pool;
    const graceMs = options.lockGraceMs ?? DEFAULT_LOCK_GRACE_MS;
    const marginMs = options.lockGraceMarginMs ?? DEFAULT_LOCK_GRACE_MARGIN_MS;
    if (!isIntegerIn(graceMs, 1, 3_600_000)) throw new ClusterError('invalid_cluster_options', { field: 'lockGraceMs' });
    if (!isIntegerIn(marginMs, 0, 3_600_000)) throw new ClusterError('invalid_cluster_options', { field: 'lockGraceMarginMs' });
    this.lockGraceMs = graceMs;
    this.reapAfterMs = graceMs + marginMs;
    const register = async (client: LockConnection) => {
      await client.query(REGISTER, [instanceId, this.reapAfterMs]);
    };
    this.lock = new InstanceLock(dedicatedConnectionOpener(pool), advisoryLockKey(CLUSTER_INSTANCE_LOCK_NAMESPACE, instanceId), options.clock ?? systemClock, options.backoff, {
      graceMs,
      onAcquired: register,
    });
  }

  /**
   * True while this instance holds its lock and confirmed it within `lockGraceMs`, i.e. while other
   * instances see it as live and it may act as such.
   */
  get live(): boolean {
    return this.lock.confirmed;
  }

  /** Acts on a lapse of the lock now (see `onLockEvent`) if the grace has passed; returns `live`. */
  checkLock(): boolean {
    return this.lock.checkConfirmed();
  }

  /**
   * Listens to the instance lock: `lost` (peers now see this instance as dead), `lapsed` (not confirmed
   * within `lockGraceMs`: act as dead), `confirmed` (held and confirmed again after a lapse).
   */
  onLockEvent(listener: (event: LockEvent) => void): () => void {
    return this.lock.onEvent(listener);
  }

  /** Adds a part of this instance (cluster admission, the run store) whose connection readiness reports. */
  attach(component: string, connected: () => boolean): void {
    this.components.set(component, connected);
  }

  /** `{instance_live, <component>_connected…}`: what readiness reports, no ids. */
  health(): Readonly<Record<string, boolean>> {
    const report: Record<string, boolean> = { instance_live: this.live };
    for (const [component, connected] of this.components) report[`${component}_connected`] = connected();
    return Object.freeze(report);
  }

  /**
   * Takes the instance lock and registers the instance. `cluster_instance_id_in_use` when another
   * live session holds the id; `cluster_unavailable` when the database cannot be reached. Idempotent.
   */
  async start(): Promise<void> {
    if (this.started) return;
    try {
      await this.lock.connect();
      // the lock's acquisition registers the instance (REGISTER)
      if (!(await this.lock.acquire())) throw new ClusterError('cluster_instance_id_in_use');
      this.started = true;
    } catch (error) {
      await this.lock.close();
      if (ClusterError.isClusterError(error)) throw error;
      throw new ClusterError('cluster_unavailable', { ...classifyFailure(error).codes });
    }
  }

  /** Releases the lock (other instances then see this one as dead) and removes the row when it can. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await runStatement(this.pool, 'DELETE FROM agent_runtime_cluster_instances WHERE instance_id = $1', [this.instanceId], unavailable).catch(() => undefined);
    await this.lock.close();
  }
}

/** The cluster's reading of a database failure: `cluster_unavailable` with the SQLSTATE or socket code only. */
export function unavailable(failure: PostgresFailure): ClusterError {
  return new ClusterError('cluster_unavailable', { ...failure.codes });
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

function defaultInstanceId(): string {
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'host';
  return `${host}-${process.pid}-${randomId('').slice(0, 8)}`;
}

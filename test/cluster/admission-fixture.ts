import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionDecisionEvent } from '../../src/admission/admission.types';
import type { ReconnectBackoff } from '../../src/database/instance-lock';
import { ClusterAdmissionController } from '../../src/admission/cluster/cluster-admission-controller';
import { ClusterInstance, clusterInstanceKeySql } from '../../src/cluster/cluster-instance';
import type { Clock } from '../../src/shared/time/clock';
import type { DatabaseHarness } from '../support/database-harness';

/** How one test instance of the cluster is built. */
export interface NodeOptions {
  reapIntervalMs?: number;
  clock?: Clock;
  /** Reconnection of the instance lock; a long one keeps a terminated instance dead. */
  instanceBackoff?: ReconnectBackoff;
  listenerBackoff?: ReconnectBackoff;
  /** Another URL of the same database (a proxy in front of it). */
  url?: string;
  /** Leave `start()` to the test. */
  startController?: boolean;
  /** The instance's lock grace and margin (`ClusterInstanceOptions`). */
  lockGraceMs?: number;
  lockGraceMarginMs?: number;
}

/** One instance of the cluster: its own DataSource (pool, sessions named `name`), instance and controller. */
export async function clusterNode(h: DatabaseHarness, name: string, config: AdmissionConfig, options: NodeOptions = {}) {
  const dataSource = await h.dataSource({ extra: { application_name: name, max: 12 } }, options.url);
  const instance = new ClusterInstance({
    dataSource,
    instanceId: name,
    backoff: options.instanceBackoff,
    clock: options.clock,
    lockGraceMs: options.lockGraceMs,
    lockGraceMarginMs: options.lockGraceMarginMs,
  });
  await instance.start();
  const events: AdmissionDecisionEvent[] = [];
  const controller = new ClusterAdmissionController(
    config,
    { instance, reapIntervalMs: options.reapIntervalMs ?? 1000, listenerBackoff: options.listenerBackoff },
    { clock: options.clock, events: { emit: (_event, payload) => events.push(payload as AdmissionDecisionEvent) } },
  );
  h.track(async () => {
    await controller.stop();
    await instance.stop();
  });
  if (options.startController ?? true) await controller.start();
  return { name, dataSource, instance, controller, events, outcomes: () => events.map((event) => event.outcome) };
}

export type ClusterNode = Awaited<ReturnType<typeof clusterNode>>;

/** Rows of the admission tables, for assertions. */
export async function rowCounts(h: DatabaseHarness): Promise<{ permits: number; queue: number }> {
  const [row] = await h.sql<{ permits: number; queue: number }>(
    `SELECT (SELECT count(*) FROM agent_runtime_admission_permits)::int AS permits, (SELECT count(*) FROM agent_runtime_admission_queue)::int AS queue`,
  );
  return row;
}

/** Terminates the sessions of `name` whose current or last query matches `pattern` (ILIKE). */
export async function terminateSessions(h: DatabaseHarness, name: string, pattern: string): Promise<number> {
  const rows = await h.sql<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND query ILIKE $2`,
    [name, pattern],
  );
  for (const { pid } of rows) await h.sql('SELECT pg_terminate_backend($1, 5000)', [pid]);
  return rows.length;
}

/**
 * Terminates the instance-lock session of the instance `instanceId`: the session holding that
 * instance's advisory lock exclusively (a peer's dead-probe holds it shared, and only once the owner
 * is gone). Matched by the lock key, not by session state: a pooled connection inside a decision
 * also holds an advisory lock, and the lock session is briefly active during each heartbeat.
 * Returns how many it terminated.
 */
export async function terminateLockSession(h: DatabaseHarness, instanceId: string): Promise<number> {
  const rows = await h.sql<{ pid: number }>(
    `WITH k AS (SELECT ${clusterInstanceKeySql('$1::text')} AS key)
     SELECT l.pid FROM pg_locks l, k WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ExclusiveLock' AND l.objsubid = 1
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.classid::bigint = (k.key >> 32) & 4294967295 AND l.objid::bigint = k.key & 4294967295`,
    [instanceId],
  );
  for (const { pid } of rows) await h.sql('SELECT pg_terminate_backend($1, 5000)', [pid]);
  return rows.length;
}

/** Lets pending callbacks and I/O run once. */
export const tick = () => new Promise((resolve) => setImmediate(resolve));

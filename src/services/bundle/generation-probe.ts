import type { DataSource } from 'typeorm';
import { poolOf } from '../../database/postgres-pool';
import type { Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { OutboxComponent } from './generation-components';

/** How long a probe step may take before the dependency counts as unavailable (spec 07 §5). */
export const PROBE_TIMEOUT_MS = 1000;

/** What a failed probe found: the DataSource gone, Postgres or the outbox not answering, the artifact root unusable. */
export type ProbeFailure = 'destroyed' | 'postgres' | 'memory_outbox' | 'artifact_root';

/** What one probe looks at. */
export interface ProbeTargets {
  readonly dataSource: DataSource | undefined;
  readonly outbox: Pick<OutboxComponent, 'health'> | null;
  /** The filesystem artifact adapter, whose `start()` re-checks its root; `null` for the other adapters. */
  readonly artifactRoot: { start?(): Promise<void> } | null;
  readonly clock: Clock;
}

/**
 * One dependency probe of a durable generation: the DataSource answers `SELECT 1`, the outbox is
 * ready, and a filesystem artifact root is still writable, each within 1000 ms. The first failure
 * found, else `null`.
 */
export async function probeDependencies(targets: ProbeTargets): Promise<ProbeFailure | null> {
  const { dataSource, outbox, artifactRoot, clock } = targets;
  if (dataSource === undefined || destroyed(dataSource)) return 'destroyed';
  // a DataSource destroyed while the probe ran fails its statements first: it counts as destroyed
  if (!(await answers(dataSource.query('SELECT 1'), clock))) return destroyed(dataSource) ? 'destroyed' : 'postgres';
  if (outbox !== null) {
    const health = await within(outbox.health(), PROBE_TIMEOUT_MS, clock).catch(() => null);
    if (health === null || health.status !== 'ready') return destroyed(dataSource) ? 'destroyed' : 'memory_outbox';
  }
  if (artifactRoot?.start !== undefined && !(await answers(artifactRoot.start(), clock))) return 'artifact_root';
  return null;
}

/** The DataSource is gone for good: destroyed, or its pool ending (`destroy()` under way). */
function destroyed(dataSource: DataSource): boolean {
  if (!dataSource.isInitialized) return true;
  const pool = poolOf(dataSource) as unknown as { ending?: unknown; ended?: unknown } | null;
  return pool !== null && (pool.ending === true || pool.ended === true);
}

function answers(work: Promise<unknown>, clock: Clock): Promise<boolean> {
  return within(work, PROBE_TIMEOUT_MS, clock).then(
    () => true,
    () => false,
  );
}

/** What a {@link DependencyWatch} probes and whom it tells. */
export interface DependencyWatchDeps extends ProbeTargets {
  /** Pause between two probes of a running generation (`probeIntervalMs`). */
  readonly intervalMs: number;
  /** True while the generation runs: a probe of a stopped generation reports nothing. */
  running(): boolean;
  /** Stops the generation on a fault found by a periodic probe. */
  fail(reason: string, details: Readonly<Record<string, string>>): void;
}

/**
 * The dependency watch of a durable generation (spec 07 §5): the first probe at start, then one
 * every `intervalMs` while it runs, turning a failure into the generation's fault; and the count of
 * ordinary pool `'error'` events of idle clients, which are never fatal (the next probe decides).
 */
export class DependencyWatch {
  #timer: unknown = undefined;
  #poolErrors = 0;
  #unwatchPool: (() => void) | null = null;

  constructor(private readonly deps: DependencyWatchDeps) {}

  /** Pool `'error'` events counted so far. */
  get poolErrors(): number {
    return this.#poolErrors;
  }

  countPoolError(): void {
    this.#poolErrors += 1;
  }

  /** The start stage `durable_health`: `runtime_service_dependency_unavailable {dependency}` when a dependency fails. */
  async first(): Promise<void> {
    const failure = await probeDependencies(this.deps);
    if (failure !== null) throw new RuntimeServiceError('runtime_service_dependency_unavailable', { dependency: failure });
  }

  /** Starts counting pool errors and probing periodically. */
  start(): void {
    const pool = poolOf(this.deps.dataSource) as unknown as { on(event: 'error', listener: () => void): unknown; removeListener(event: 'error', listener: () => void): unknown } | null;
    if (pool !== null) {
      const listener = () => this.countPoolError();
      pool.on('error', listener);
      this.#unwatchPool = () => pool.removeListener('error', listener);
    }
    this.#schedule();
  }

  /** Stops both; a probe in flight finds the generation stopped and reports nothing. */
  stop(): void {
    this.#unwatchPool?.();
    this.#unwatchPool = null;
    if (this.#timer !== undefined) this.deps.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#timer = this.deps.clock.setTimer(() => void this.#periodic(), this.deps.intervalMs);
  }

  async #periodic(): Promise<void> {
    this.#timer = undefined;
    if (!this.deps.running()) return;
    const failure = await probeDependencies(this.deps);
    if (!this.deps.running()) return;
    if (failure === 'destroyed') this.deps.fail('runtime_service_dependency_down', { dependency: 'postgres' });
    else if (failure === 'artifact_root') this.deps.fail('runtime_service_child_down', { component: 'artifact' });
    else if (failure !== null) this.deps.fail('runtime_service_dependency_unavailable', { dependency: failure });
    else this.#schedule();
  }
}

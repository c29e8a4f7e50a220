import type { DataSource } from 'typeorm';
import type { Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';
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
  if (dataSource === undefined || !dataSource.isInitialized) return 'destroyed';
  if (!(await answers(dataSource.query('SELECT 1'), clock))) return 'postgres';
  if (outbox !== null) {
    const health = await within(outbox.health(), PROBE_TIMEOUT_MS, clock).catch(() => null);
    if (health === null || health.status !== 'ready') return 'memory_outbox';
  }
  if (artifactRoot?.start !== undefined && !(await answers(artifactRoot.start(), clock))) return 'artifact_root';
  return null;
}

function answers(work: Promise<unknown>, clock: Clock): Promise<boolean> {
  return within(work, PROBE_TIMEOUT_MS, clock).then(
    () => true,
    () => false,
  );
}

import { DEFAULT_RECONNECT_BACKOFF, type ReconnectBackoff } from '../../database/instance-lock';
import { optionFailureDetails, readOptions, readOwnData } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { ClusterInstance } from '../../cluster/cluster-instance';
import { ClusterError } from '../../cluster/cluster.errors';

/** Where a {@link ClusterAdmissionController} coordinates (spec 08 §2, §3). Unknown keys are refused. */
export interface ClusterAdmissionOptions {
  /** This process's cluster instance, started by its owner before the controller starts. */
  readonly instance: ClusterInstance;
  /** Period of the reap of dead instances and of the poll for grants missed by NOTIFY, in ms (1..3600000). @default 1000 */
  readonly reapIntervalMs?: number;
  /** Reconnection backoff of the LISTEN connection. @default {initialMs: 100, maxMs: 5000} */
  readonly listenerBackoff?: ReconnectBackoff;
}

/** Validated {@link ClusterAdmissionOptions} with the defaults applied. */
export interface ResolvedClusterAdmissionOptions {
  readonly instance: ClusterInstance;
  readonly reapIntervalMs: number;
  readonly listenerBackoff: ReconnectBackoff;
}

const isBackoff = (value: unknown): boolean => {
  const own = readOwnData(value, ['initialMs', 'maxMs']);
  if (own === null || own.accessors.length > 0 || own.unknown.length > 0) return false;
  const { initialMs, maxMs } = own.values;
  return isSafeIntegerAtLeast(initialMs, 1) && isSafeIntegerAtLeast(maxMs, 1) && initialMs <= maxMs;
};

const RULES = {
  instance: (value: unknown) => value instanceof ClusterInstance,
  reapIntervalMs: integerIn(1, 3_600_000),
  listenerBackoff: isBackoff,
};

/** Throws `ClusterError('invalid_cluster_options')` with `details.field`/`fields` naming what is wrong. */
export function resolveClusterAdmissionOptions(options: unknown): ResolvedClusterAdmissionOptions {
  const read = readOptions(options, RULES, { name: 'cluster', unknownKeys: 'refuse' });
  if (!read.ok) throw new ClusterError('invalid_cluster_options', optionFailureDetails(read.fields));
  const values = read.values as Partial<ClusterAdmissionOptions>;
  if (values.instance === undefined) throw new ClusterError('invalid_cluster_options', { field: 'instance' });
  const backoff = values.listenerBackoff ?? DEFAULT_RECONNECT_BACKOFF;
  return Object.freeze({
    instance: values.instance,
    reapIntervalMs: values.reapIntervalMs ?? 1000,
    listenerBackoff: Object.freeze({ initialMs: backoff.initialMs, maxMs: backoff.maxMs }),
  });
}

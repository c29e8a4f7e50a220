import { MAX_TIMER_DELAY_MS, systemClock, type Clock } from '../../../../shared/time/clock';
import { optionFailureDetails, readOptions } from '../../../../shared/options/option-reader';
import { integerIn } from '../../../../shared/options/option-rules';
import { ClusterInstance } from '../../../../cluster/cluster-instance';
import { ClusterError } from '../../../../cluster/cluster.errors';

/** Options of `new PostgresRunStore(...)` (spec 08 §4). Unknown keys and bad values give `invalid_cluster_options` (`{field}`). */
export interface PostgresRunStoreOptions {
  /** This process's cluster instance: runs created or resumed here record its id as their owner. */
  readonly instance: ClusterInstance;
  /** Postgres schema of both tables (`^[a-z_][a-z0-9_]{0,62}$`). @default the connection's current_schema() */
  readonly schema?: string;
  /** Period of the fallback poll of watched runs, the dead-owner reap and the prune, 10..60000 ms. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Finished runs removed per prune statement (up to 10 statements a tick), 1..10000. @default 100 */
  readonly pruneBatchSize?: number;
  /** Runs of dead owners taken over per tick, 1..1000. @default 16 */
  readonly claimBatchSize?: number;
  /** Finished runs older than this are pruned by the tick, whoever finished them; set it to the registry's. 0..2^31−1 ms. @default 300000 */
  readonly finishedRunTtlMs?: number;
  /** Source of the prune's wall time. @default systemClock */
  readonly clock?: Clock;
}

/** Options with the defaults applied. */
export interface ResolvedPostgresRunStoreOptions {
  readonly instance: ClusterInstance;
  readonly schema: string | null;
  readonly pollIntervalMs: number;
  readonly pruneBatchSize: number;
  readonly claimBatchSize: number;
  readonly finishedRunTtlMs: number;
  readonly clock: Clock;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const RULES = {
  instance: (value: unknown) => value instanceof ClusterInstance,
  schema: (value: unknown) => typeof value === 'string' && SCHEMA_NAME.test(value),
  pollIntervalMs: integerIn(10, 60_000),
  pruneBatchSize: integerIn(1, 10_000),
  claimBatchSize: integerIn(1, 1000),
  finishedRunTtlMs: integerIn(0, MAX_TIMER_DELAY_MS),
  clock: (value: unknown) => typeof value === 'object' && value !== null && typeof (value as Clock).wallNow === 'function',
};

/** Validates the options (unknown keys refused) and applies the defaults. */
export function resolvePostgresRunStoreOptions(options: unknown): ResolvedPostgresRunStoreOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new ClusterError('invalid_cluster_options', optionFailureDetails(read.fields));
  const o = read.values as Partial<PostgresRunStoreOptions>;
  if (o.instance === undefined) throw new ClusterError('invalid_cluster_options', { field: 'instance' });
  return Object.freeze({
    instance: o.instance as ClusterInstance,
    schema: o.schema ?? null,
    pollIntervalMs: o.pollIntervalMs ?? 1000,
    pruneBatchSize: o.pruneBatchSize ?? 100,
    claimBatchSize: o.claimBatchSize ?? 16,
    finishedRunTtlMs: o.finishedRunTtlMs ?? 300_000,
    clock: o.clock ?? systemClock,
  });
}

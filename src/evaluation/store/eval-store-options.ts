import { isPostgresIdentifier } from '../../database/schema/table-spec';
import { readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn, isBoolean } from '../../shared/options/option-rules';
import { EvalServiceError } from '../eval.errors';
import { evalOptionFailure } from '../eval-option-failure';
import { DEFAULT_EVAL_TABLE_PREFIX, isEvalTablePrefix } from './eval-store.schema';

/**
 * Options of a {@link PostgresEvalStore} (spec 05 §2.1). Unknown keys are refused
 * (`unknown_eval_store_options` naming every one, `{field}` or `{fields}`); a bad value is
 * `invalid_eval_store_options` (`{field}`, the first bad option in sorted order). `schema` and `tablePrefix` make up the
 * store's identity with the database; every other option is operational.
 */
export interface PostgresEvalStoreOptions {
  /** Postgres schema of the five tables (`^[a-z_][a-z0-9_]{0,62}$`). @default current_schema() of the pool, read once */
  schema?: string;
  /**
   * Prefix of the five table names, `^[a-z_][a-z0-9_]{0,40}$`; another prefix than the default needs
   * the migrations of `createEvalStoreMigrations(prefix)`. @default 'agent_runtime_eval_'
   */
  tablePrefix?: string;
  /** Set revisions the whole store may hold, 1..1,000,000. @default 10000 */
  maxSets?: number;
  /** Jobs the whole store may hold, 1..10,000,000. @default 100000 */
  maxJobs?: number;
  /** Baselines the whole store may hold, 1..1,000,000. @default 10000 */
  maxBaselines?: number;
  /** Page size of a listing that names none, 1..`maxPageLimit`. @default min(100, maxPageLimit) */
  defaultPageLimit?: number;
  /** Largest page of a listing, 1..10,000. @default 1000 */
  maxPageLimit?: number;
  /**
   * Largest set revision, or job (request + result), in canonical JSON bytes, 1..268,435,455 (the
   * largest `jsonb` value). @default 16777216 (16 MiB)
   */
  maxRecordBytes?: number;
  /** Bytes the whole store may hold, 1..2^53 − 1. @default 1073741824 (1 GiB) */
  maxTotalBytes?: number;
  /** Bytes one app may hold, 1..2^53 − 1. @default 268435456 (256 MiB) */
  maxScopeBytes?: number;
  /** Rows one `prune` call scans when it names no limit, 1..`maxPruneLimit`. @default min(100, maxPruneLimit) */
  defaultPruneLimit?: number;
  /** Most rows one `prune` call may scan, 1..100,000. @default 10000 */
  maxPruneLimit?: number;
  /** Retries of a connection failure when the dedicated connection is opened (500 ms apart), 0..10. @default 2 */
  connectRetries?: number;
  /** `statement_timeout` of every store transaction, 1..3,600,000 ms. @default 10000 */
  statementTimeoutMs?: number;
  /** Require a synchronous standby when the schema is validated (spec 04 §1.3). @default false */
  requireSynchronousStandby?: boolean;
}

/** Options with every default applied. */
export interface ResolvedEvalStoreOptions {
  readonly schema: string | null;
  readonly tablePrefix: string;
  readonly maxSets: number;
  readonly maxJobs: number;
  readonly maxBaselines: number;
  readonly defaultPageLimit: number;
  readonly maxPageLimit: number;
  readonly maxRecordBytes: number;
  readonly maxTotalBytes: number;
  readonly maxScopeBytes: number;
  readonly defaultPruneLimit: number;
  readonly maxPruneLimit: number;
  readonly connectRetries: number;
  readonly statementTimeoutMs: number;
  readonly requireSynchronousStandby: boolean;
}

/** The largest `jsonb` value Postgres stores is 2^28 − 1 bytes. */
export const MAX_EVAL_RECORD_BYTES_LIMIT = 2 ** 28 - 1;

const MiB = 1024 * 1024;

const EVAL_STORE_OPTION_RULES: OptionRules<keyof PostgresEvalStoreOptions> = {
  schema: isPostgresIdentifier,
  tablePrefix: isEvalTablePrefix,
  maxSets: integerIn(1, 1_000_000),
  maxJobs: integerIn(1, 10_000_000),
  maxBaselines: integerIn(1, 1_000_000),
  defaultPageLimit: integerIn(1, 10_000),
  maxPageLimit: integerIn(1, 10_000),
  maxRecordBytes: integerIn(1, MAX_EVAL_RECORD_BYTES_LIMIT),
  maxTotalBytes: integerIn(1),
  maxScopeBytes: integerIn(1),
  defaultPruneLimit: integerIn(1, 100_000),
  maxPruneLimit: integerIn(1, 100_000),
  connectRetries: integerIn(0, 10),
  statementTimeoutMs: integerIn(1, 3_600_000),
  requireSynchronousStandby: isBoolean,
};

/**
 * Validates `options` and applies the defaults. Once every option passes its own rule, a default
 * limit above its maximum (`defaultPageLimit` > `maxPageLimit`, `defaultPruneLimit` >
 * `maxPruneLimit`) is `invalid_eval_store_options` naming the default.
 */
export function resolveEvalStoreOptions(options: unknown): ResolvedEvalStoreOptions {
  const read = readOptions(options, EVAL_STORE_OPTION_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw evalOptionFailure(read, 'unknown_eval_store_options', 'invalid_eval_store_options');
  const o = read.values as PostgresEvalStoreOptions;
  const maxPageLimit = o.maxPageLimit ?? 1000;
  const maxPruneLimit = o.maxPruneLimit ?? 10_000;
  const defaultPageLimit = o.defaultPageLimit ?? Math.min(100, maxPageLimit);
  const defaultPruneLimit = o.defaultPruneLimit ?? Math.min(100, maxPruneLimit);
  if (defaultPageLimit > maxPageLimit) throw new EvalServiceError('invalid_eval_store_options', { field: 'defaultPageLimit' });
  if (defaultPruneLimit > maxPruneLimit) throw new EvalServiceError('invalid_eval_store_options', { field: 'defaultPruneLimit' });
  return Object.freeze({
    schema: o.schema ?? null,
    tablePrefix: o.tablePrefix ?? DEFAULT_EVAL_TABLE_PREFIX,
    maxSets: o.maxSets ?? 10_000,
    maxJobs: o.maxJobs ?? 100_000,
    maxBaselines: o.maxBaselines ?? 10_000,
    defaultPageLimit,
    maxPageLimit,
    maxRecordBytes: o.maxRecordBytes ?? 16 * MiB,
    maxTotalBytes: o.maxTotalBytes ?? 1024 * MiB,
    maxScopeBytes: o.maxScopeBytes ?? 256 * MiB,
    defaultPruneLimit,
    maxPruneLimit,
    connectRetries: o.connectRetries ?? 2,
    statementTimeoutMs: o.statementTimeoutMs ?? 10_000,
    requireSynchronousStandby: o.requireSynchronousStandby ?? false,
  });
}

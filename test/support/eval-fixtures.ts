import type { DataSource } from 'typeorm';
import { EvalServiceError, type EvalServiceErrorCode } from '../../src/evaluation/eval.errors';
import type { EvalJobOptions, EvalMetric, EvalResult, EvalSet, PreparedEvalRequest } from '../../src/evaluation/eval.types';
import type { PostgresEvalStoreOptions } from '../../src/evaluation/store/eval-store-options';
import { PostgresEvalStore, type PostgresEvalStoreDeps } from '../../src/evaluation/store/postgres-eval-store';
import { canonicalJson, deepFreeze, type JsonObject } from '../../src/json';
import { systemClock, type Clock } from '../../src/shared/time/clock';
import { sha256Hex } from '../../src/shared/text/sha256';
import { openDatabaseHarness, useHarness, type DatabaseHarness } from './database-harness';
import type { FreshDatabaseOptions } from './fresh-database';

/** What a test may change of a prepared request; the digest and sizes always follow. */
export interface PreparedRequestParts {
  readonly set?: Partial<EvalSet>;
  readonly agent?: string;
  readonly metrics?: readonly EvalMetric[];
  readonly options?: EvalJobOptions;
  readonly metadata?: JsonObject;
}

const bytesOf = (value: unknown) => Buffer.byteLength(canonicalJson(value), 'utf8');

/**
 * A {@link PreparedEvalRequest} exactly as the preparation pool returns it: frozen, `set_digest` the
 * SHA-256 hex of the set's canonical JSON, `set_bytes` its bytes, and `request_bytes` the bytes of
 * `{agent, metrics, options, metadata}` plus `set_bytes`.
 */
export function preparedRequest(parts: PreparedRequestParts = {}): PreparedEvalRequest {
  const set: EvalSet = {
    id: 'set-a',
    version: 'v1',
    cases: [{ case_id: 'c1', input: 'hello', expected_output: 'hello there' }],
    ...parts.set,
  };
  const agent = parts.agent ?? 'helper';
  const metrics = parts.metrics ?? [{ name: 'response_match', threshold: 0.8, match: 'rouge_1' }];
  const options = parts.options ?? {};
  const metadata = parts.metadata ?? {};
  const setText = canonicalJson(set);
  const setBytes = Buffer.byteLength(setText, 'utf8');
  return deepFreeze({
    set,
    set_digest: sha256Hex(setText),
    set_bytes: setBytes,
    agent,
    metrics,
    options,
    metadata,
    request_bytes: bytesOf({ agent, metrics, options, metadata }) + setBytes,
  });
}

/** A result record of a completed job; `padding` bytes of output make it larger. */
export function evalResult(passed = true, padding = 0): EvalResult {
  return deepFreeze({
    schema_version: 1,
    passed,
    metrics: { response_match: { score: passed ? 1 : 0, threshold: 0.8, passed } },
    cases: [
      {
        case_id: 'c1',
        passed,
        error: null,
        scores: { response_match: passed ? 1 : 0 },
        actual_output: 'x'.repeat(padding),
        actual_tool_calls: [],
        truncated: false,
      },
    ],
  });
}

/** Canonical JSON bytes of `value` (what the store counts). */
export function canonicalBytes(value: unknown): number {
  return bytesOf(value);
}

/** A clock whose wall time the test sets; timers are the system's. */
export class SettableClock implements Clock {
  constructor(public now = 1_000_000) {}
  monotonicNow = systemClock.monotonicNow;
  setTimer = systemClock.setTimer;
  clearTimer = systemClock.clearTimer;
  wallNow(): number {
    return this.now;
  }
}

/** A database harness that builds eval stores; dedicated connections a test opened go with `track`. */
export interface EvalHarness extends DatabaseHarness {
  /** A store on a new DataSource of its own unless one is given. */
  store(options?: PostgresEvalStoreOptions, deps?: PostgresEvalStoreDeps, dataSource?: DataSource): Promise<PostgresEvalStore>;
}

export async function openEvalHarness(options: FreshDatabaseOptions = {}): Promise<EvalHarness> {
  const base = await openDatabaseHarness(options);
  return {
    ...base,
    async store(storeOptions, deps, dataSource) {
      return new PostgresEvalStore(dataSource ?? (await base.dataSource()), storeOptions, deps);
    },
  };
}

/**
 * Registers hooks giving the enclosing block a fresh, migrated database: one per test (`'each'`,
 * for tests that count rows or fill caps) or one for the whole block (`'all'`).
 */
export function useEvalHarness(per: 'each' | 'all' = 'each', options: FreshDatabaseOptions = {}): () => EvalHarness {
  return useHarness(() => openEvalHarness(options), per);
}

/** Awaits `promise`, expecting an `EvalServiceError` with `code` (and exactly `details` when given); returns it. */
export async function evalError(promise: Promise<unknown>, code: EvalServiceErrorCode, details?: Record<string, unknown>): Promise<EvalServiceError> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  if (!EvalServiceError.isEvalServiceError(error)) throw new Error(`expected EvalServiceError ${code}, got ${error === undefined ? 'success' : String(error)}`);
  expect({ code: error.code, details: details === undefined ? undefined : error.details }).toEqual({ code, details });
  return error;
}

/** Row counts of the five tables with the default prefix (or `prefix`). */
export async function tableCounts(harness: EvalHarness, prefix = 'agent_runtime_eval_'): Promise<Record<string, number>> {
  const tables = ['set_revisions', 'jobs', 'baselines', 'usage', 'identity'];
  const counts: Record<string, number> = {};
  for (const table of tables) counts[table] = Number((await harness.sql<{ n: string }>(`SELECT count(*) AS n FROM ${prefix}${table}`))[0].n);
  return counts;
}

/** The usage rows by app (`''` is the global row), counters as numbers. */
export async function usageRows(harness: EvalHarness, prefix = 'agent_runtime_eval_'): Promise<Record<string, { sets: number; jobs: number; baselines: number; bytes: number }>> {
  const rows = await harness.sql<{ scope_app: string; sets: number; jobs: number; baselines: number; bytes: string }>(
    `SELECT scope_app, sets, jobs, baselines, bytes FROM ${prefix}usage ORDER BY scope_app`,
  );
  return Object.fromEntries(rows.map((row) => [row.scope_app, { sets: row.sets, jobs: row.jobs, baselines: row.baselines, bytes: Number(row.bytes) }]));
}

/** The usage rows as the tables say they must be: counts and bytes (set content + job records) per app and in all. */
export async function recountUsage(harness: EvalHarness, prefix = 'agent_runtime_eval_'): Promise<Record<string, { sets: number; jobs: number; baselines: number; bytes: number }>> {
  const rows = await harness.sql<{ scope_app: string; sets: string; jobs: string; baselines: string; bytes: string }>(`
    SELECT u.scope_app,
      (SELECT count(*) FROM ${prefix}set_revisions s WHERE s.scope_app = u.scope_app) AS sets,
      (SELECT count(*) FROM ${prefix}jobs j WHERE j.scope_app = u.scope_app) AS jobs,
      (SELECT count(*) FROM ${prefix}baselines b WHERE b.scope_app = u.scope_app) AS baselines,
      (SELECT coalesce(sum(content_bytes), 0) FROM ${prefix}set_revisions s WHERE s.scope_app = u.scope_app)
        + (SELECT coalesce(sum(record_bytes), 0) FROM ${prefix}jobs j WHERE j.scope_app = u.scope_app) AS bytes
    FROM ${prefix}usage u WHERE u.scope_app <> '' ORDER BY 1`);
  const apps = Object.fromEntries(rows.map((r) => [r.scope_app, { sets: Number(r.sets), jobs: Number(r.jobs), baselines: Number(r.baselines), bytes: Number(r.bytes) }]));
  const total = Object.values(apps).reduce(
    (sum, r) => ({ sets: sum.sets + r.sets, jobs: sum.jobs + r.jobs, baselines: sum.baselines + r.baselines, bytes: sum.bytes + r.bytes }),
    { sets: 0, jobs: 0, baselines: 0, bytes: 0 },
  );
  return { '': total, ...apps };
}

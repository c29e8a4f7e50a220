import type { TransactionClient } from '../../database/transaction-runner';
import { rowNumber } from './eval-records';
import type { EvalStoreStatements } from './eval-store-sql';

/** The global usage row's `scope_app`; apps are at least one byte long, so it is no app's. */
export const GLOBAL_USAGE = '';

/** The counters of one usage row, or a change of them. */
export interface UsageCounts {
  readonly sets: number;
  readonly jobs: number;
  readonly baselines: number;
  readonly bytes: number;
}

const ZERO: UsageCounts = Object.freeze({ sets: 0, jobs: 0, baselines: 0, bytes: 0 });

/**
 * Locks the global usage row and then `app`'s (each created with zero counters when absent) and
 * returns their counters. Every transaction that changes usage takes the global row first and holds
 * it until it ends, so such transactions run one after another: caps checked under the lock cannot
 * be overshot by a concurrent writer, and no two of them can deadlock on the app rows.
 */
export async function lockUsage(client: TransactionClient, sql: EvalStoreStatements, app: string | null, nowMs: number): Promise<{ global: UsageCounts; app: UsageCounts }> {
  const global = await lockRow(client, sql, GLOBAL_USAGE, nowMs);
  return { global, app: app === null ? ZERO : await lockRow(client, sql, app, nowMs) };
}

async function lockRow(client: TransactionClient, sql: EvalStoreStatements, scopeApp: string, nowMs: number): Promise<UsageCounts> {
  // the row exists but for an app's first write: one round trip while the global lock is held
  let [row] = (await client.query(sql.lockUsage, [scopeApp])).rows;
  if (row === undefined) {
    await client.query(sql.ensureUsage, [scopeApp, nowMs]);
    [row] = (await client.query(sql.lockUsage, [scopeApp])).rows;
  }
  return { sets: rowNumber(row.sets), jobs: rowNumber(row.jobs), baselines: rowNumber(row.baselines), bytes: rowNumber(row.bytes) };
}

/** Changes of usage collected per app during a transaction; {@link apply} writes them, the global row's sum included. */
export class UsageChanges {
  readonly #byApp = new Map<string, { sets: number; jobs: number; baselines: number; bytes: number }>();

  /** Adds `change` (negative when rows are deleted) to `app`'s pending change. */
  add(app: string, change: Partial<UsageCounts>): void {
    const entry = this.#byApp.get(app) ?? { ...ZERO };
    entry.sets += change.sets ?? 0;
    entry.jobs += change.jobs ?? 0;
    entry.baselines += change.baselines ?? 0;
    entry.bytes += change.bytes ?? 0;
    this.#byApp.set(app, entry);
  }

  /** One statement updating the rows of the apps changed and the global row; the rows must be locked or held by the global lock. */
  async apply(client: TransactionClient, sql: EvalStoreStatements, nowMs: number): Promise<void> {
    if (this.#byApp.size === 0) return;
    const rows = [...this.#byApp].map(([app, change]) => ({ app, ...change }));
    const total = rows.reduce((sum, row) => ({ sets: sum.sets + row.sets, jobs: sum.jobs + row.jobs, baselines: sum.baselines + row.baselines, bytes: sum.bytes + row.bytes }), ZERO);
    rows.push({ app: GLOBAL_USAGE, ...total });
    await client.query(sql.applyUsage, [
      rows.map((row) => row.app),
      rows.map((row) => row.sets),
      rows.map((row) => row.jobs),
      rows.map((row) => row.baselines),
      rows.map((row) => row.bytes),
      nowMs,
    ]);
  }
}

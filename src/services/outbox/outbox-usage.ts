import type { TransactionClient } from '../../database/transaction-runner';
import { scopeKey } from '../service-scope';
import type { MemoryScope } from '../services.types';
import { rowNumber } from './outbox-context';
import type { OutboxStatements } from './outbox-sql';

/** The usage row of all scopes. */
export const GLOBAL_USAGE_KEY = 'global';
/** The usage row health writes to (its counters stay 0). */
export const HEALTH_USAGE_KEY = 'health';

/** The usage row of a memory scope: `scope:` + its scope key. */
export function scopeUsageKey(scope: MemoryScope): string {
  return `scope:${scopeKey('memory', { appName: scope.appName, userId: scope.userId })}`;
}

/** The counters of one usage row, or a change of them. */
export interface UsageCounters {
  readonly activeJobs: number;
  readonly activeBytes: number;
  readonly terminalJobs: number;
}

const ZERO: UsageCounters = Object.freeze({ activeJobs: 0, activeBytes: 0, terminalJobs: 0 });

/**
 * Locks the global usage row and then `scopeKey`'s and returns both. Every transaction that changes
 * usage locks the global row first and holds it to its end, so they run one after another: caps
 * checked under the lock cannot be overshot by another instance, and the scope rows cannot
 * deadlock. A missing row reads as zero; it is created (at zero) only with `create`, for a change
 * that adds to it: a scope with an active job always has its row.
 */
export async function lockUsage(client: TransactionClient, sql: OutboxStatements, scopeKey: string | null, create = false): Promise<{ global: UsageCounters; scope: UsageCounters }> {
  const global = await lockRow(client, sql, GLOBAL_USAGE_KEY, true);
  return { global, scope: scopeKey === null ? ZERO : await lockRow(client, sql, scopeKey, create) };
}

async function lockRow(client: TransactionClient, sql: OutboxStatements, key: string, create: boolean): Promise<UsageCounters> {
  let [row] = (await client.query(sql.lockUsage, [key])).rows;
  if (row === undefined && create) {
    await client.query(sql.ensureUsage, [key]);
    [row] = (await client.query(sql.lockUsage, [key])).rows;
  }
  if (row === undefined) return ZERO;
  return { activeJobs: rowNumber(row.active_jobs), activeBytes: rowNumber(row.active_bytes), terminalJobs: rowNumber(row.terminal_jobs) };
}

/** Changes of usage collected per scope during a transaction; {@link apply} writes them and their sum on the global row. */
export class UsageChanges {
  readonly #byScope = new Map<string, { activeJobs: number; activeBytes: number; terminalJobs: number }>();

  /** Adds `change` to the scope of `app`/`user`. */
  add(scope: MemoryScope, change: Partial<UsageCounters>): void {
    const key = scopeUsageKey(scope);
    const entry = this.#byScope.get(key) ?? { ...ZERO };
    entry.activeJobs += change.activeJobs ?? 0;
    entry.activeBytes += change.activeBytes ?? 0;
    entry.terminalJobs += change.terminalJobs ?? 0;
    this.#byScope.set(key, entry);
  }

  /** A job of `bytes` left the active set for a terminal phase. */
  finished(scope: MemoryScope, bytes: number): void {
    this.add(scope, { activeJobs: -1, activeBytes: -bytes, terminalJobs: 1 });
  }

  /**
   * Adds the changes to the scope rows and their sum to the global row (one statement when the rows
   * exist, as the locks before made sure), then the scope rows left at zero are deleted (a missing row reads as zero), so the table stays as large
   * as the scopes with jobs. The caller holds the global usage lock.
   */
  async apply(client: TransactionClient, sql: OutboxStatements): Promise<void> {
    if (this.#byScope.size === 0) return;
    const rows = [...this.#byScope].map(([key, change]) => ({ key, ...change }));
    const total = rows.reduce(
      (sum, row) => ({ activeJobs: sum.activeJobs + row.activeJobs, activeBytes: sum.activeBytes + row.activeBytes, terminalJobs: sum.terminalJobs + row.terminalJobs }),
      ZERO,
    );
    const all = [{ key: GLOBAL_USAGE_KEY, ...total }, ...rows];
    const updated = new Set((await client.query(sql.applyUsage, columns(all))).rows.map((row) => row.usage_key as string));
    const missing = all.filter((row) => !updated.has(row.key));
    if (missing.length > 0) {
      // rows are created by the lock before a change; should one be missing, it starts at zero
      await client.query(sql.ensureUsageRows, [missing.map((row) => row.key)]);
      await client.query(sql.applyUsage, columns(missing));
    }
    await client.query(sql.dropEmptyScopes, [rows.map((r) => r.key)]);
  }
}

function columns(rows: ReadonlyArray<{ key: string } & UsageCounters>): unknown[] {
  return [rows.map((r) => r.key), rows.map((r) => r.activeJobs), rows.map((r) => r.activeBytes), rows.map((r) => r.terminalJobs)];
}

import type { TransactionClient } from '../../database/transaction-runner';
import { within } from '../../shared/time/timeout';
import { RuntimeServiceError } from '../runtime-service.errors';
import { rowNumber, type OutboxContext } from './outbox-context';
import type { OutboxHealthRecord } from './outbox.types';

/** Bound of each step of a health check, ms (spec 07 §6.5). */
export const HEALTH_STEP_TIMEOUT_MS = 1000;

/** The usage counters a health record reports. */
export interface HealthCounters {
  readonly active_jobs: number;
  readonly active_bytes: number;
  readonly terminal_jobs: number;
}

const STANDBY_LEVELS: readonly string[] = ['on', 'remote_write', 'remote_apply'];
/** Connection, five statements and the commit. */
const STEPS = 7;

/**
 * One health check (spec 07 §6.5), the same cost at any table size: in one transaction with a
 * 1000 ms statement timeout, a point read of the `global` usage row, one-row reads of the due index
 * and of the epochs table, one sentinel write to the `health` usage row, and the
 * `synchronous_commit` check (not `off`; with `requireSynchronousStandby` a waiting level and a named
 * standby). Each step is bounded by 1000 ms; any failure gives `unavailable` with `previous`
 * counters. `hydrated` false (no adapter registered yet) is `unavailable` too.
 */
export async function checkHealth(context: OutboxContext, hydrated: boolean, previous: HealthCounters): Promise<OutboxHealthRecord> {
  const registry = hydrated ? 'hydrated' : 'hydrating';
  try {
    const measured = await within(
      context.run(async (client, sql) => {
        const [usage] = await step(client, sql.healthUsage, context);
        const [oldest] = await step(client, sql.healthOldestDue, context);
        await step(client, sql.healthEpochs, context);
        await step(client, sql.healthSentinel, context);
        const [settings] = await step(client, sql.healthSettings, context);
        if (!settingsPass(String(settings?.synchronous_commit), String(settings?.synchronous_standby_names ?? ''), context.options.requireSynchronousStandby)) {
          throw new RuntimeServiceError('runtime_service_dependency_unavailable', { dependency: 'postgres' });
        }
        return {
          counters: {
            active_jobs: rowNumber(usage?.active_jobs ?? 0),
            active_bytes: rowNumber(usage?.active_bytes ?? 0),
            terminal_jobs: rowNumber(usage?.terminal_jobs ?? 0),
          },
          lag: rowNumber(oldest?.lag ?? 0),
        };
      }, HEALTH_STEP_TIMEOUT_MS),
      HEALTH_STEP_TIMEOUT_MS * STEPS,
      context.clock,
    );
    return healthRecord(hydrated ? 'ready' : 'unavailable', registry, measured.counters, measured.lag);
  } catch {
    return healthRecord('unavailable', registry, previous, 0);
  }
}

/** A frozen health record. */
export function healthRecord(status: OutboxHealthRecord['status'], registry: OutboxHealthRecord['registry'], counters: HealthCounters, lag: number): OutboxHealthRecord {
  return Object.freeze({
    status,
    persistence: 'postgres',
    tables: 3,
    registry,
    active_jobs: counters.active_jobs,
    active_bytes: counters.active_bytes,
    terminal_jobs: counters.terminal_jobs,
    oldest_due_lag_ms: lag,
  });
}

async function step(client: TransactionClient, text: string, context: OutboxContext) {
  return (await within(client.query(text), HEALTH_STEP_TIMEOUT_MS, context.clock)).rows;
}

function settingsPass(synchronousCommit: string, standbyNames: string, requireStandby: boolean): boolean {
  if (requireStandby) return STANDBY_LEVELS.includes(synchronousCommit) && standbyNames.trim() !== '';
  return synchronousCommit !== 'off';
}

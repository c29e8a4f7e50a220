import type { DataSource } from 'typeorm';
import { dedicatedConnectionOpener } from '../../database/dedicated-connection';
import { InstanceLock, type ReconnectBackoff } from '../../database/instance-lock';
import { classifyFailure } from '../../database/postgres-failure';
import type { PgPool } from '../../database/postgres-pool';
import { assertSchema } from '../../database/schema/schema-validator';
import type { SchemaCheckTarget } from '../../database/schema/startup-schema-check';
import { SchemaValidatorError } from '../../database/schema-validator.errors';
import type { Clock } from '../../shared/time/clock';
import { retry } from '../../shared/time/retry';
import { ledgerStatement } from './ledger-connection';
import { instanceLockKey } from './ledger-instance-key';
import type { ResolvedLedgerOptions } from '../ledger-options';
import { qualifiedTable } from '../../database/qualified-table';
import { ledgerStatements, type LedgerStatements } from './ledger-sql';
import { LedgerError } from '../ledger.errors';
import { ledgerTableSpec } from './ledger.schema';

/** Pause between start-up connection attempts (spec 04 §1.4). */
const START_RETRY_DELAY_MS = 500;

/** What a started ledger instance holds: its statements and its instance lock. */
export interface OpenedLedgerInstance {
  readonly statements: LedgerStatements;
  readonly lock: InstanceLock;
}

/**
 * Start-up of spec 04 §8 after the options: opens the dedicated lock connection (retrying
 * connection failures), validates the ledger table with `synchronous_commit` read on the pool and
 * on that connection (`schema_mismatch` listing every difference), then takes the instance lock
 * (`ledger_instance_id_in_use`). On any failure the lock connection is closed again.
 */
export async function openLedgerInstance(
  dataSource: DataSource,
  pool: PgPool,
  settings: ResolvedLedgerOptions,
  clock: Clock,
  backoff: ReconnectBackoff,
): Promise<OpenedLedgerInstance> {
  const lock = new InstanceLock(dedicatedConnectionOpener(pool), instanceLockKey(settings.instanceId), clock, backoff);
  try {
    await connectWithRetries(lock, settings.connectRetries, clock);
    await assertLedgerTable(dataSource, settings, lock, clock);
    // the DML is qualified, so a later change of search_path cannot redirect it
    const schema = settings.schema ?? (await currentSchema(pool));
    if (!(await lock.acquire())) throw new LedgerError('ledger_instance_id_in_use');
    return { statements: ledgerStatements(qualifiedTable(schema, settings.tableName)), lock };
  } catch (error) {
    await lock.close();
    if (LedgerError.isLedgerError(error)) throw error;
    throw new LedgerError('ledger_unavailable', classifyFailure(error).codes);
  }
}

async function connectWithRetries(lock: InstanceLock, retries: number, clock: Clock): Promise<void> {
  let attempts = 0;
  try {
    await retry(
      () => ((attempts += 1), lock.connect()),
      { attempts: retries + 1, delayMs: START_RETRY_DELAY_MS, retryable: (error) => classifyFailure(error).connection },
      clock,
    );
  } catch (error) {
    throw new LedgerError('ledger_unavailable', { attempts, ...classifyFailure(error).codes });
  }
}

/** The ledger's table as the app-wide start-up check validates it (the pool's `synchronous_commit` only). */
export function ledgerSchemaTarget(dataSource: DataSource, settings: ResolvedLedgerOptions): SchemaCheckTarget {
  return {
    dataSource,
    specs: [ledgerTableSpec(settings.tableName)],
    options: {
      ...(settings.schema === null ? {} : { schema: settings.schema }),
      connectRetries: settings.connectRetries,
      requireSynchronousStandby: settings.requireSynchronousStandby,
    },
  };
}

async function assertLedgerTable(dataSource: DataSource, settings: ResolvedLedgerOptions, lock: InstanceLock, clock: Clock): Promise<void> {
  const target = ledgerSchemaTarget(dataSource, settings);
  try {
    await assertSchema(
      dataSource,
      target.specs,
      { ...target.options, dedicatedConnections: lock.connection ? [lock.connection] : [], clock },
      (mismatches) => new LedgerError('schema_mismatch', { mismatches }),
    );
  } catch (error) {
    if (error instanceof SchemaValidatorError) throw new LedgerError('ledger_unavailable', error.details);
    throw error;
  }
}

async function currentSchema(pool: PgPool): Promise<string | null> {
  const [row] = await ledgerStatement(pool, 'SELECT current_schema() AS schema', []);
  return (row?.schema as string | null | undefined) ?? null;
}

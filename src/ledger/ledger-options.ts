import { randomUUID } from 'node:crypto';
import { isPostgresIdentifier } from '../database/schema/table-spec';
import { optionFailureDetails, readOptions, type OptionRules } from '../shared/options/option-reader';
import { integerIn, isBoolean, isFunction } from '../shared/options/option-rules';
import { DEFAULT_LEDGER_TABLE, isLedgerTableName } from './storage/ledger.schema';
import { LedgerError } from './ledger.errors';
import { defaultSanitizeTerminalOutcome, type SanitizeTerminalOutcome } from './outcome-projection';
import { isTokenId } from '../shared/ids/id-rule';

/** Options of an {@link InvocationLedger} (spec 04 §8, without `dataSourceName`). Unknown keys are refused. */
export interface InvocationLedgerOptions {
  /** Postgres schema of the table. @default current_schema() of the DataSource's connections */
  schema?: string;
  /**
   * Table name, `^[a-z_][a-z0-9_]{0,43}$`; a custom name needs a migration built with
   * `createLedgerMigration(tableName)`. @default 'agent_runtime_invocations'
   */
  tableName?: string;
  /** Id of this ledger instance, `^[A-Za-z0-9._:-]{1,128}$`; its advisory lock advertises liveness. @default a random UUID */
  instanceId?: string;
  /** Lease the Runner integration claims and renews with, 1..86,400,000 ms. @default 30000 */
  defaultLeaseMs?: number;
  /** Largest checkpoint or outcome, in bytes of canonical JSON, 1..268,435,455. @default 16777216 (16 MiB) */
  maxDocumentBytes?: number;
  /** Start-up retries of a connection failure (500 ms apart, 2000 ms per attempt), 0..10. @default 2 */
  connectRetries?: number;
  /** Require a synchronous standby (spec 04 §1.3). @default false */
  requireSynchronousStandby?: boolean;
  /**
   * Projection of `failed` and `cancelled` outcomes before they are stored; must return a JSON-safe
   * value. @default keeps only `{reason}` (see {@link defaultSanitizeTerminalOutcome})
   */
  sanitizeTerminalOutcome?: SanitizeTerminalOutcome;
}

/** Options with every default applied. */
export interface ResolvedLedgerOptions {
  readonly schema: string | null;
  readonly tableName: string;
  readonly instanceId: string;
  readonly defaultLeaseMs: number;
  readonly maxDocumentBytes: number;
  readonly connectRetries: number;
  readonly requireSynchronousStandby: boolean;
  readonly sanitizeTerminalOutcome: SanitizeTerminalOutcome;
}

export const MAX_LEASE_MS = 86_400_000;
export const DEFAULT_MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/** The largest `jsonb` value Postgres stores is 2^28 − 1 bytes. */
export const MAX_DOCUMENT_BYTES_LIMIT = 2 ** 28 - 1;
export const MAX_CONNECT_RETRIES = 10;

/** The rules of spec 04 §8, one per option; `undefined` means "take the default". */
const LEDGER_OPTION_RULES: OptionRules<keyof InvocationLedgerOptions> = {
  schema: isPostgresIdentifier,
  tableName: isLedgerTableName,
  instanceId: isTokenId,
  defaultLeaseMs: integerIn(1, MAX_LEASE_MS),
  maxDocumentBytes: integerIn(1, MAX_DOCUMENT_BYTES_LIMIT),
  connectRetries: integerIn(0, MAX_CONNECT_RETRIES),
  requireSynchronousStandby: isBoolean,
  sanitizeTerminalOutcome: isFunction,
};

/**
 * Validates `options` (unknown keys refused) and applies the defaults; throws
 * `invalid_ledger_options` with `{field}` or sorted `{fields}`.
 */
export function resolveLedgerOptions(options: unknown): ResolvedLedgerOptions {
  const read = readOptions(options, LEDGER_OPTION_RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new LedgerError('invalid_ledger_options', optionFailureDetails(read.fields));
  const o = read.values as InvocationLedgerOptions;
  return Object.freeze({
    schema: o.schema ?? null,
    tableName: o.tableName ?? DEFAULT_LEDGER_TABLE,
    instanceId: o.instanceId ?? randomUUID(),
    defaultLeaseMs: o.defaultLeaseMs ?? 30_000,
    maxDocumentBytes: o.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES,
    connectRetries: o.connectRetries ?? 2,
    requireSynchronousStandby: o.requireSynchronousStandby ?? false,
    sanitizeTerminalOutcome: o.sanitizeTerminalOutcome ?? defaultSanitizeTerminalOutcome,
  });
}

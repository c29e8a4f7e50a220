import { randomUUID } from 'node:crypto';
import { IsBoolean, ValidateBy, ValidateIf, validateSync } from 'class-validator';
import { isPostgresIdentifier } from '../database/table-spec';
import { isPlainObject, isSafeIntegerAtLeast } from '../shared/plain-object';
import { DEFAULT_LEDGER_TABLE, isLedgerTableName } from './ledger.schema';
import { LedgerError } from './ledger.errors';
import { defaultSanitizeTerminalOutcome, type SanitizeTerminalOutcome } from './outcome-projection';

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
export const INSTANCE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const present = (_: object, value: unknown) => value !== undefined;
const rule = (name: string, test: (value: unknown) => boolean) => ValidateBy({ name, validator: { validate: test, defaultMessage: () => name } });

/** The rules of spec 04 §8 as a class-validator schema; `undefined` means "take the default". */
export class LedgerOptionsSchema {
  @ValidateIf(present) @rule('postgresIdentifier', isPostgresIdentifier)
  schema?: unknown;

  @ValidateIf(present) @rule('ledgerTableName', isLedgerTableName)
  tableName?: unknown;

  @ValidateIf(present) @rule('instanceId', (v) => typeof v === 'string' && INSTANCE_ID.test(v))
  instanceId?: unknown;

  @ValidateIf(present) @rule('leaseMs', (v) => isSafeIntegerAtLeast(v, 1) && v <= MAX_LEASE_MS)
  defaultLeaseMs?: unknown;

  @ValidateIf(present) @rule('documentBytes', (v) => isSafeIntegerAtLeast(v, 1) && v <= MAX_DOCUMENT_BYTES_LIMIT)
  maxDocumentBytes?: unknown;

  @ValidateIf(present) @rule('connectRetries', (v) => isSafeIntegerAtLeast(v, 0) && v <= MAX_CONNECT_RETRIES)
  connectRetries?: unknown;

  @ValidateIf(present) @IsBoolean()
  requireSynchronousStandby?: unknown;

  @ValidateIf(present) @rule('function', (v) => typeof v === 'function')
  sanitizeTerminalOutcome?: unknown;
}

const OPTION_NAMES = [
  'schema',
  'tableName',
  'instanceId',
  'defaultLeaseMs',
  'maxDocumentBytes',
  'connectRetries',
  'requireSynchronousStandby',
  'sanitizeTerminalOutcome',
] as const;
const KNOWN = new Set<string>(OPTION_NAMES);

/**
 * Names of the options that break the rules, in declaration order: `'options'` when the value is
 * not a plain object, `'unknown'` for keys the ledger does not know. Empty when valid.
 */
export function invalidLedgerOptions(options: unknown, extraKeys: readonly string[] = []): string[] {
  if (options === undefined) return [];
  try {
    if (!isPlainObject(options)) return ['options'];
    const keys = Reflect.ownKeys(options);
    const unknown = keys.some((key) => typeof key !== 'string' || (!KNOWN.has(key) && !extraKeys.includes(key)));
    const schema = new LedgerOptionsSchema() as Record<string, unknown>;
    const getters: string[] = [];
    for (const name of OPTION_NAMES) {
      // own data only: a getter must not feed the ledger a value it did not validate
      const descriptor = Object.getOwnPropertyDescriptor(options, name);
      if (descriptor && !('value' in descriptor)) getters.push(name);
      schema[name] = descriptor && 'value' in descriptor ? descriptor.value : undefined;
    }
    const failed = new Set([...validateSync(schema).map((error) => error.property), ...getters]);
    return [...OPTION_NAMES.filter((name) => failed.has(name)), ...(unknown ? ['unknown'] : [])];
  } catch {
    // a hostile value (a throwing proxy trap) is simply not valid options
    return ['options'];
  }
}

/** Validates `options` and applies the defaults; throws `invalid_ledger_options` naming the bad options. */
export function resolveLedgerOptions(options: unknown): ResolvedLedgerOptions {
  const invalid = invalidLedgerOptions(options);
  if (invalid.length > 0) throw new LedgerError('invalid_ledger_options', { option: invalid[0], options: invalid });
  const o = (options ?? {}) as InvocationLedgerOptions;
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

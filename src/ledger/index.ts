export { InvocationLedger, CLOSE_GRACE_MS } from './invocation-ledger';
export type {
  InvocationLedgerDeps,
  InvocationMetadata,
  ClaimOptions,
  LeaseOptions,
  NowOption,
  LedgerState,
  LedgerStatus,
} from './invocation-ledger.types';
export {
  INVOCATION_PHASES,
  TERMINAL_PHASES,
  type InvocationRecord,
  type ClaimResult,
  type InvocationPhase,
  type TerminalPhase,
  type JsonValue,
} from './invocation-record';
export { LedgerError, type LedgerErrorCode, type LedgerOperation } from './ledger.errors';
export {
  DEFAULT_MAX_DOCUMENT_BYTES,
  MAX_LEASE_MS,
  type InvocationLedgerOptions,
} from './ledger-options';
export { defaultSanitizeTerminalOutcome, type SanitizeTerminalOutcome } from './outcome-projection';
export { DEFAULT_LEDGER_TABLE, LEDGER_TABLE_SPEC, ledgerTableSpec } from './ledger.schema';
export { createLedgerMigration, LEDGER_MIGRATION_TIMESTAMP } from './ledger-migration';
export { instanceLockKey, type ReconnectBackoff } from './instance-lock';
export { LEDGER_MODULE_OPTIONS, LEDGER_OPERATION_EVENT, type LedgerOperationEvent } from './ledger.constants';
export { LedgerModule, type LedgerModuleOptions, type LedgerModuleAsyncOptions } from './ledger.module';

export { InvocationLedger } from './invocation-ledger';
export type {
  InvocationLedgerDeps,
  InvocationMetadata,
  ClaimOptions,
  ExpiredOptions,
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
export type { InvocationLedgerOptions } from './ledger-options';
export { defaultSanitizeTerminalOutcome, type SanitizeTerminalOutcome } from './outcome-projection';
export { createLedgerMigration } from './storage/ledger-migration';
export type { ReconnectBackoff } from '../database/instance-lock';
export { finishWithRetry, type FinishRetryOptions } from './finish-retry';
export type { LedgerOperationEvent } from './ledger.constants';
export { LedgerHealthIndicator } from './ledger.health';
export { LedgerModule, type LedgerModuleOptions, type LedgerModuleAsyncOptions, type LedgerOptionsFactory } from './ledger.module';

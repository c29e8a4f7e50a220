import { TelemetryEvents } from '../telemetry/telemetry-events';
import type { InvocationPhase } from './invocation-record';
import type { LedgerErrorCode, LedgerOperation } from './ledger.errors';

/** Injection token of the `LedgerModule` options. */
export const LEDGER_MODULE_OPTIONS = Symbol('LEDGER_MODULE_OPTIONS');

/** Telemetry event of every ledger operation (spec 04 §8). */
export const LEDGER_OPERATION_EVENT = TelemetryEvents.ledgerOperation;

/** Payload of {@link LEDGER_OPERATION_EVENT}: no ids, tokens or documents. */
export interface LedgerOperationEvent {
  readonly operation: LedgerOperation;
  /** `'ok'`, or the code the operation failed with. */
  readonly outcome: 'ok' | LedgerErrorCode;
  readonly duration_ms: number;
  /** Phase of the invocation after the operation; `null` when there is no record (refusals, delete, a missing row). */
  readonly phase: InvocationPhase | null;
}

/** Default `limit` of `listExpired` and `recoverExpired`. */
export const DEFAULT_EXPIRED_LIMIT = 100;
/** Largest `limit` of `listExpired` and `recoverExpired`: one call stays one bounded statement. */
export const MAX_EXPIRED_LIMIT = 1000;
/** Outcome `recoverExpired` stores on the invocations it fails. */
export const LEASE_EXPIRED_OUTCOME = Object.freeze({ reason: 'lease_expired' });

import type { Clock } from '../shared/time/clock';
import type { TelemetrySink } from '../telemetry/telemetry-sink';
import type { ReconnectBackoff } from '../database/instance-lock';

/** Lifecycle of a ledger instance: only a `started` ledger serves operations. */
export type LedgerState = 'new' | 'starting' | 'started' | 'closing' | 'closed';

/** A frozen snapshot of the instance for health reporting. */
export interface LedgerStatus {
  readonly state: LedgerState;
  readonly lock_held: boolean;
}

/** Collaborators of an {@link InvocationLedger}. */
export interface InvocationLedgerDeps {
  /** Receives `agent_runtime.ledger.operation` events (`EventEmitter2` fits). @default none */
  events?: TelemetrySink;
  /** Operation durations and the timers of reconnection and probes. @default systemClock */
  clock?: Clock;
  /** Reconnection backoff of the lock connection. @default 100 ms doubling to 5000 ms */
  reconnectBackoff?: ReconnectBackoff;
}

/** Metadata of a new invocation: strings of 1..256 UTF-8 bytes. */
export interface InvocationMetadata {
  /** Agent or workflow name. */
  workflowId: string;
  /** Version string of that agent or workflow. */
  workflowVersion: string;
  /** Caller-defined kind, e.g. `agent_run`. */
  kind: string;
}

/** `now`: epoch ms replacing the database clock for every comparison and stored time of the call. */
export interface NowOption {
  now?: number;
}

export interface LeaseOptions extends NowOption {
  /** Lease length, 1..86,400,000 ms. */
  leaseMs: number;
}

export interface ClaimOptions extends LeaseOptions {
  /** Fencing token (a UUID) to claim with. @default crypto.randomUUID() */
  ownerToken?: string;
}

/** Options of `listExpired` and `recoverExpired`. */
export interface ExpiredOptions extends NowOption {
  /** Most rows one call lists or recovers, 1..1000. @default 100 */
  limit?: number;
}

import type { JsonValue } from '../json/json.types';

export type { JsonValue } from '../json/json.types';

/** Phases of an invocation (spec 04 §3). */
export type InvocationPhase = 'ready' | 'running' | 'paused' | 'completed' | 'failed' | 'timed_out' | 'cancelled';

/** The phases `finish` accepts. */
export type TerminalPhase = 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'paused';

export const INVOCATION_PHASES: readonly InvocationPhase[] = Object.freeze([
  'ready',
  'running',
  'paused',
  'completed',
  'failed',
  'timed_out',
  'cancelled',
]);

export const TERMINAL_PHASES: readonly TerminalPhase[] = Object.freeze(['completed', 'failed', 'timed_out', 'cancelled', 'paused']);

/**
 * The public, frozen record of one invocation (spec 04 §4). The owner token is never in it; times
 * are epoch milliseconds. `checkpoint` and `outcome` are the stored JSON (equal as JSON values, key
 * order not kept), deep-frozen.
 */
export interface InvocationRecord {
  readonly invocation_id: string;
  readonly workflow_id: string;
  readonly workflow_version: string;
  readonly kind: string;
  readonly checkpoint: JsonValue;
  readonly phase: InvocationPhase;
  readonly outcome: JsonValue;
  /** True exactly while the phase is `running`. */
  readonly owned: boolean;
  /** Ledger instance id of the current owner, `null` when not running. */
  readonly owner_instance: string | null;
  /** Lease end, epoch ms; 0 when not running. */
  readonly lease_until_ms: number;
  /** +1 on every successful mutation after create. */
  readonly revision: number;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** What `claim` resolves to: the token, given to the claimer once, beside the record. */
export interface ClaimResult {
  readonly ownerToken: string;
  readonly invocation: InvocationRecord;
}

/** The columns every statement returns, JSON as text so that parsing does not depend on global pg type parsers. */
export interface InvocationRow {
  id: string;
  workflow_id: string;
  workflow_version: string;
  kind: string;
  checkpoint_json: string;
  phase: string;
  outcome_json: string | null;
  owned: boolean;
  owner_instance: string | null;
  lease_until_ms: string | number;
  revision: string | number;
  created_at_ms: string | number;
  updated_at_ms: string | number;
}

/** The frozen public record of a row. */
export function toInvocationRecord(row: InvocationRow): InvocationRecord {
  return Object.freeze({
    invocation_id: row.id,
    workflow_id: row.workflow_id,
    workflow_version: row.workflow_version,
    kind: row.kind,
    checkpoint: parseFrozen(row.checkpoint_json),
    phase: row.phase as InvocationPhase,
    outcome: row.outcome_json === null ? null : parseFrozen(row.outcome_json),
    owned: row.owned,
    owner_instance: row.owner_instance,
    lease_until_ms: Number(row.lease_until_ms),
    revision: Number(row.revision),
    created_at_ms: Number(row.created_at_ms),
    updated_at_ms: Number(row.updated_at_ms),
  });
}

/** `JSON.parse`, then freezes every container without recursion (stored documents may nest deeply). */
function parseFrozen(json: string): JsonValue {
  const value = JSON.parse(json) as JsonValue;
  if (typeof value !== 'object' || value === null) return value;
  const pending: object[] = [value];
  while (pending.length > 0) {
    const container = pending.pop() as Record<string, unknown>;
    for (const key in container) {
      const inner = container[key];
      if (typeof inner === 'object' && inner !== null) pending.push(inner);
    }
    Object.freeze(container);
  }
  return value;
}

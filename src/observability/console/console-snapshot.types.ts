import type { AdmissionStatus, TenantAdmissionStatus } from '../../admission/admission.types';
import type { RunStatus } from '../../runner/runs/run-registry.types';

/** One agent's admission counts. */
export interface ConsoleAgentAdmission {
  readonly agent: string;
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
  /** The adaptive limit in force (spec 09 §6); only for an agent listed in `adaptive`. */
  readonly effective_limit?: number;
  /** Only with a cost limit configured. */
  readonly cost_in_use?: number;
}

/** One tenant's admission counts (spec 09 §7). */
export interface ConsoleTenantAdmission extends TenantAdmissionStatus {
  readonly tenant: string;
}

/**
 * The admission controller's status: its per-agent counts as a list sorted by agent, and (with a
 * tenant option) its top tenants as a list, most active + queued work first.
 */
export type ConsoleAdmission = Omit<AdmissionStatus, 'per_agent' | 'per_tenant'> & {
  readonly per_agent: readonly ConsoleAgentAdmission[];
  readonly per_tenant?: readonly ConsoleTenantAdmission[];
};

/** A run as the console lists it: the status record's fields without session or invocation ids. */
export interface ConsoleRun {
  readonly run_id: string;
  readonly agent: string;
  readonly status: RunStatus;
  readonly pending_call_ids: readonly string[];
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  readonly last_seq: number;
  /** The run's error code, else `null`. */
  readonly error_code: string | null;
}

/** A call of a paused run waiting for a human: ids and the tool's name, never the arguments. */
export interface ConsoleConfirmation {
  readonly run_id: string;
  readonly call_id: string;
  /** `null` once the `confirmation_requested` item left the run's replay buffer. */
  readonly tool: string | null;
}

/** A denial as the Postgres audit log holds it: the content-free decision fields. */
export interface ConsoleDenial {
  readonly decision_id: string;
  readonly decided_at_ms: number;
  readonly operation: string;
  /** The agent, tool or content subject the decision is about; `'unknown_tool'` for a tool name a model made up. */
  readonly subject: string;
  /** With `'unknown_tool'`: the SHA-256 prefix of the made-up name, which matches its repeats; else `null`. */
  readonly subject_digest: string | null;
  readonly outcome: string;
  readonly reason: string;
}

/**
 * The recent denials, newest first; `no_postgres_audit_log` when the policy module does not write
 * one, `unavailable` when reading it failed.
 */
export type ConsoleDenials =
  | { readonly status: 'ok'; readonly items: readonly ConsoleDenial[] }
  | { readonly status: 'no_postgres_audit_log' }
  | { readonly status: 'unavailable' }
  /** The viewer may not see denials (`mayViewDenials`). */
  | { readonly status: 'not_shown' };

/**
 * What the console stream sends (`event: snapshot`): content-free by construction. A section is
 * `null` when its module is not in the application.
 */
export interface ConsoleSnapshot {
  readonly schema_version: 1;
  readonly admission: ConsoleAdmission | null;
  readonly runs: readonly ConsoleRun[] | null;
  readonly confirmations: readonly ConsoleConfirmation[] | null;
  readonly denials: ConsoleDenials;
}

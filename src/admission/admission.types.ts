import type { Permit } from './permit';

/** Outcome of one lifecycle transition of a request (spec 01 §6, §8). */
export type AdmissionOutcome =
  | 'granted'
  | 'queued'
  | 'rejected'
  | 'queue_full'
  | 'expired'
  | 'cancelled'
  | 'released'
  | 'owner_down'
  | 'requester_down'
  | 'deployment_draining';

/** Payload of `agent_runtime.admission.decision`: totals are counted after the transition. */
export interface AdmissionDecisionEvent {
  readonly wait_ms: number;
  readonly active: number;
  readonly queued: number;
  readonly outcome: AdmissionOutcome;
  readonly agent_id: string;
}

/** What `submit` returns: a permit now, or a place in the queue with the deadline in effect. */
export type SubmitResult =
  | Readonly<{ requestRef: string; status: 'granted'; permit: Permit }>
  | Readonly<{ requestRef: string; status: 'queued'; deadline: number | 'infinity' }>;

/** Per-agent counts in {@link AdmissionStatus}. */
export interface AgentAdmissionStatus {
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
}

/** Frozen, JSON-safe status record (spec 01 §5.8). */
export interface AdmissionStatus {
  readonly draining: boolean;
  /** Wall-clock ms of the first `beginDrain`, else `null`. */
  readonly drain_started_at: number | null;
  readonly global_limit: number;
  readonly max_queue: number;
  readonly active: number;
  readonly available: number;
  readonly queue_length: number;
  readonly overflow: 'reject' | 'queue';
  /** Only agents with active or queued work; null prototype. */
  readonly per_agent: Readonly<Record<string, AgentAdmissionStatus>>;
}

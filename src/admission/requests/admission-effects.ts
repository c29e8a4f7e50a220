import type { AdmissionStatus, AdmissionOutcome, AdmissionDecisionEvent } from '../admission.types';

/**
 * The side effects of one controller operation (settlements, signal aborts, telemetry), performed
 * in the order they arose once the state is consistent (spec 01 §9). An effect that calls back into
 * the controller starts a new operation whose effects join the running flush.
 */
export class EffectQueue {
  private readonly effects: Array<() => void> = [];
  private flushing = false;

  push(effect: () => void): void {
    this.effects.push(effect);
  }

  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      for (let i = 0; i < this.effects.length; i++) this.effects[i]();
    } finally {
      this.effects.length = 0;
      this.flushing = false;
    }
  }
}

/** The frozen payload of `agent_runtime.admission.decision` (spec 01 §8): whole, non-negative `wait_ms`. */
export function decisionPayload(outcome: AdmissionOutcome, agentId: string, waitMs: number, active: number, queued: number): AdmissionDecisionEvent {
  return Object.freeze({ wait_ms: waitMs > 0 ? Math.floor(waitMs) : 0, active, queued, outcome, agent_id: agentId });
}

/** Counts of one agent as a status record lists them. */
export interface AgentCounts {
  readonly id: string;
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
}

/** The frozen status record of spec 01 §5.8 from a controller's counts. */
export function admissionStatusRecord(
  state: { readonly draining: boolean; readonly drainStartedAt: number | null; readonly active: number; readonly queued: number },
  config: { readonly globalLimit: number; readonly maxQueue: number; readonly overflow: 'reject' | 'queue' },
  agents: Iterable<AgentCounts>,
): AdmissionStatus {
  const perAgent = Object.create(null) as Record<string, { active: number; queued: number; limit: number }>;
  for (const agent of agents) perAgent[agent.id] = Object.freeze({ active: agent.active, queued: agent.queued, limit: agent.limit });
  return Object.freeze({
    draining: state.draining,
    drain_started_at: state.drainStartedAt,
    global_limit: config.globalLimit,
    max_queue: config.maxQueue,
    active: state.active,
    available: Math.max(0, config.globalLimit - state.active),
    queue_length: state.queued,
    overflow: config.overflow,
    per_agent: Object.freeze(perAgent),
  });
}

import type { DecisionOutcome } from './admission-decisions';

/** A removal of one of this instance's requests, already subtracted from the view. */
export interface Removal {
  readonly agentId: string;
  readonly what: 'active' | 'queued';
}

/** Counts of one agent across the cluster. */
interface AgentCounts {
  active: number;
  queued: number;
}

/**
 * The cluster's counts as the last decision read them (spec 08 §3 status), lowered at once by this
 * instance's own removals so its status and telemetry never lag behind what it did itself; the next
 * decision's reading replaces them.
 */
export class ClusterView {
  active = 0;
  queued = 0;
  instancesLive = 0;
  private agents = new Map<string, AgentCounts>();

  private read(counts: DecisionOutcome['counts']): void {
    this.active = counts.active;
    this.queued = counts.queued;
    this.instancesLive = counts.instancesLive;
    this.agents = new Map([...counts.perAgent].map(([id, agent]) => [id, { active: agent.active, queued: agent.queued }]));
  }

  /**
   * Takes the reading of a decision made while this instance removed `removedSince` (not in its counts
   * yet). `granted` runs for each grant of `instanceId`, the totals then as they stood right after it.
   */
  readDecision(outcome: DecisionOutcome, instanceId: string, removedSince: readonly Removal[], granted: (requestId: string) => void): void {
    for (const grant of outcome.grants) {
      if (grant.instanceId !== instanceId) continue;
      this.active = grant.activeAfter;
      this.queued = grant.queuedAfter;
      for (const { what } of removedSince) this[what] = Math.max(0, this[what] - 1);
      granted(grant.requestId);
    }
    this.read(outcome.counts);
    for (const removal of removedSince) this.lower(removal.agentId, removal.what);
  }

  /** This instance removed one of its own active or queued requests of `agentId`. */
  lower(agentId: string, what: 'active' | 'queued'): void {
    const agent = this.agents.get(agentId);
    if (agent === undefined || agent[what] === 0) return;
    agent[what]--;
    this[what]--;
    if (agent.active === 0 && agent.queued === 0) this.agents.delete(agentId);
  }

  /** The agents with work, with the limit `limitOf` gives each. */
  perAgent(limitOf: (agentId: string) => number): Array<{ id: string; active: number; queued: number; limit: number }> {
    return [...this.agents].map(([id, counts]) => ({ id, active: counts.active, queued: counts.queued, limit: limitOf(id) }));
  }
}

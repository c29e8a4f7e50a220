import { agentLimitOf, type ResolvedAdmissionConfig } from '../admission-config';
import type { ClusterCounts } from './admission-decisions';

/** Active and queued requests of one agent across the cluster. */
export interface AgentCounts {
  active: number;
  queued: number;
}

/** The counts of one decision, kept up to date as it grants and enqueues. */
export class Tally {
  private readonly agents = new Map<string, AgentCounts>();
  active = 0;
  queued = 0;

  constructor(
    readonly config: ResolvedAdmissionConfig,
    rows: ReadonlyArray<readonly [string, number, number]>,
  ) {
    for (const [agentId, active, queued] of rows) this.add(agentId, active, queued);
  }

  of(agentId: string): AgentCounts {
    return this.agents.get(agentId) ?? { active: 0, queued: 0 };
  }

  limitOf(agentId: string): number {
    return agentLimitOf(this.config, agentId);
  }

  add(agentId: string, active: number, queued: number): void {
    const counts = this.agents.get(agentId) ?? { active: 0, queued: 0 };
    counts.active += active;
    counts.queued += queued;
    this.agents.set(agentId, counts);
    this.active += active;
    this.queued += queued;
  }

  grantQueued(agentId: string): void {
    this.add(agentId, 1, -1);
  }

  eligibleAgents(): string[] {
    const eligible: string[] = [];
    for (const [agentId, counts] of this.agents) if (counts.queued > 0 && counts.active < this.limitOf(agentId)) eligible.push(agentId);
    return eligible;
  }

  counts(instancesLive: number): ClusterCounts {
    const perAgent = new Map<string, Readonly<AgentCounts>>();
    for (const [agentId, counts] of this.agents) if (counts.active > 0 || counts.queued > 0) perAgent.set(agentId, Object.freeze({ ...counts }));
    return Object.freeze({ active: this.active, queued: this.queued, perAgent, instancesLive });
  }
}

import { agentLimitOf, type OverflowMode, type ResolvedAdmissionConfig } from '../admission-config';
import type { AdmissionOutcome } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import type { PostgresFailure } from '../../database/postgres-failure';
import type { PgPool } from '../../database/postgres-pool';
import { runTransaction, type TransactionClient } from '../../database/transaction-runner';
import {
  ADMISSION_DECISION_LOCK_KEY,
  GRANT_OLDEST,
  INSERT_PERMIT,
  INSERT_QUEUED,
  LOCK_DECISIONS,
  NOTIFY_INSTANCES,
  OPEN_DECISION,
} from './admission-sql';

/** Bound of every statement of a decision, the wait for the lock included. */
const DECISION_STATEMENT_TIMEOUT_MS = 5000;

/** Active and queued requests of one agent across the cluster. */
export interface AgentCounts {
  active: number;
  queued: number;
}

/** The cluster as a decision left it. */
export interface ClusterCounts {
  readonly active: number;
  readonly queued: number;
  readonly perAgent: ReadonlyMap<string, Readonly<AgentCounts>>;
  readonly instancesLive: number;
}

/** A new request of this instance, decided after the dispatch. */
export interface SubmitPlan {
  readonly ref: string;
  readonly permitId: string;
  readonly agentId: string;
  readonly overflow: OverflowMode;
  /** Absolute monotonic ms; `Infinity` for none. */
  readonly deadline: number;
}

/** What one decision does besides reaping, counting and dispatching. */
export interface DecisionPlan {
  readonly instanceId: string;
  readonly config: ResolvedAdmissionConfig;
  /** This instance's requests to delete, queued or granted. */
  readonly retire: readonly string[];
  /** Delete every row of this instance (its last decision, at stop). */
  readonly retireAll?: boolean;
  /** This instance's requests to look up: which hold a permit, which still wait. */
  readonly lookUp: readonly string[];
  readonly submit?: SubmitPlan;
  /** The monotonic clock the submit's deadline is judged on. */
  readonly now: () => number;
}

/** How the submit of a plan was decided. */
export type SubmitDecision =
  | { readonly kind: 'granted' }
  | { readonly kind: 'queued'; readonly seq: number }
  | { readonly kind: 'rejected'; readonly scope: 'agent' | 'global' }
  | { readonly kind: 'queue_full' }
  | { readonly kind: 'expired' };

/** A queued request granted by the dispatch of a decision. */
export interface GrantedRow {
  readonly requestId: string;
  readonly agentId: string;
  readonly instanceId: string;
  /** Cluster totals right after this grant (telemetry reports each transition's own totals). */
  readonly activeAfter: number;
  readonly queuedAfter: number;
}

/** What a committed decision did and saw. */
export interface DecisionOutcome {
  readonly submit: SubmitDecision | undefined;
  readonly grants: readonly GrantedRow[];
  /** Requests of `lookUp` holding a permit. */
  readonly held: ReadonlySet<string>;
  /** Requests of `lookUp` still queued. */
  readonly waiting: ReadonlySet<string>;
  readonly counts: ClusterCounts;
}

/** The error a submit throws and the outcome it reports for a refusal of the cluster (spec 01 §5.1 steps 6–7). */
export function refusalOf(decision: SubmitDecision, maxQueue: number): [AdmissionError, AdmissionOutcome] {
  switch (decision.kind) {
    case 'rejected':
      return [new AdmissionError('concurrency_limit_reached', { limit_scope: decision.scope }), 'rejected'];
    case 'queue_full':
      return [new AdmissionError('admission_queue_full', { max_queue: maxQueue }), 'queue_full'];
    default:
      return [new AdmissionError('queue_deadline_exceeded'), 'expired'];
  }
}

/** The admission reading of a database failure: `admission_store_unavailable` with codes only. */
export function storeUnavailable(failure: PostgresFailure): AdmissionError {
  return new AdmissionError('admission_store_unavailable', { ...failure.codes });
}

/**
 * One admission decision of the cluster (spec 08 §3), in one transaction under the decision lock:
 * reap dead instances, retire this instance's gone requests, count, grant the oldest eligible queued
 * requests while capacity lasts, decide the new request, and notify every other instance that
 * received a grant. Fails with `admission_store_unavailable`; then nothing of it was committed.
 */
export function runDecision(pool: PgPool, plan: DecisionPlan): Promise<DecisionOutcome> {
  return runTransaction(pool, (client) => decide(client, plan), storeUnavailable, { statementTimeoutMs: DECISION_STATEMENT_TIMEOUT_MS });
}

async function decide(client: TransactionClient, plan: DecisionPlan): Promise<DecisionOutcome> {
  await client.query(LOCK_DECISIONS, [ADMISSION_DECISION_LOCK_KEY]);
  const { rows } = await client.query(OPEN_DECISION, [plan.instanceId, plan.retire, plan.lookUp, plan.retireAll === true]);
  const opened = rows[0] as { agents: Array<[string, number, number]>; held: string[]; waiting: string[]; instances_live: number };
  const tally = new Tally(plan.config, opened.agents);
  const grants = await dispatch(client, tally);
  const submit = plan.submit && (await decideSubmit(client, plan, plan.submit, tally));
  const notified = [...new Set(grants.map((grant) => grant.instanceId))].filter((id) => id !== plan.instanceId);
  if (notified.length > 0) await client.query(NOTIFY_INSTANCES, [notified]);
  return { submit, grants, held: new Set(opened.held), waiting: new Set(opened.waiting), counts: tally.counts(opened.instances_live) };
}

/** Grants the oldest queued request whose agent has spare capacity, again and again, while global capacity lasts. */
async function dispatch(client: TransactionClient, tally: Tally): Promise<GrantedRow[]> {
  const grants: GrantedRow[] = [];
  while (tally.active < tally.config.globalLimit) {
    const eligible = tally.eligibleAgents();
    if (eligible.length === 0) break;
    const { rows } = await client.query(GRANT_OLDEST, [eligible]);
    const row = rows[0] as { request_id: string; agent_id: string; instance_id: string } | undefined;
    if (row === undefined) break;
    tally.grantQueued(row.agent_id);
    grants.push({ requestId: row.request_id, agentId: row.agent_id, instanceId: row.instance_id, activeAfter: tally.active, queuedAfter: tally.queued });
  }
  return grants;
}

/** Spec 01 §5.1 steps 5–7 over the cluster's counts. */
async function decideSubmit(client: TransactionClient, plan: DecisionPlan, submit: SubmitPlan, tally: Tally): Promise<SubmitDecision> {
  const agent = tally.of(submit.agentId);
  const agentLimit = tally.limitOf(submit.agentId);
  if (tally.active < plan.config.globalLimit && agent.active < agentLimit) {
    await client.query(INSERT_PERMIT, [submit.permitId, submit.ref, submit.agentId, plan.instanceId]);
    tally.add(submit.agentId, 1, 0);
    return { kind: 'granted' };
  }
  if (submit.overflow === 'reject') return { kind: 'rejected', scope: agent.active >= agentLimit ? 'agent' : 'global' };
  if (tally.queued >= plan.config.maxQueue) return { kind: 'queue_full' };
  const now = plan.now();
  if (submit.deadline <= now) return { kind: 'expired' };
  const remainingMs = submit.deadline === Infinity ? null : submit.deadline - now;
  const { rows } = await client.query(INSERT_QUEUED, [submit.ref, submit.permitId, submit.agentId, plan.instanceId, remainingMs]);
  tally.add(submit.agentId, 0, 1);
  return { kind: 'queued', seq: Number((rows[0] as { seq: string | number }).seq) };
}

/** The counts of one decision, kept up to date as it grants and enqueues. */
class Tally {
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
